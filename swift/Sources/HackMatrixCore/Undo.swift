// UNDO snapshots (game-rules.md §7.10): pushed at the end of every enemy phase
// that runs, at most UNDO_DEPTH kept, emptied at every stage generation.

extension GameState {
    /// The state at the start of the player's next turn.
    func makeSnapshot() -> Snapshot {
        Snapshot(
            player: player, owned: owned, turn: turn, cells: cells, enemies: enemies,
            transmissions: transmissions, showActivated: showActivated, tasksDisabled: tasksDisabled,
            atkPlusUses: atkPlusUses)
    }

    mutating func pushSnapshot() {
        if history.count == Rules.undoDepth { history.removeFirst() }
        history.append(makeSnapshot())
    }

    /// Pops the newest snapshot and restores it. Origin flags are lost, as in the original.
    mutating func restoreLatestSnapshot() {
        let snapshot = history.removeLast()
        player = snapshot.player
        owned = snapshot.owned
        turn = snapshot.turn
        cells = snapshot.cells
        enemies = snapshot.enemies.map { enemy in
            var restored = enemy
            restored.fromSiphon = false
            restored.fromScheduled = false
            return restored
        }
        transmissions = snapshot.transmissions.map { transmission in
            var restored = transmission
            restored.fromSiphon = false
            restored.fromScheduled = false
            return restored
        }
        showActivated = snapshot.showActivated
        tasksDisabled = snapshot.tasksDisabled
        atkPlusUses = snapshot.atkPlusUses
    }
}
