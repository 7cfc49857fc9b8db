// Directional actions (game-rules.md §5): attack the first thing along the
// line of fire, or step one cell when nothing is there.

extension GameState {
    /// Returns true when the player stepped onto the exit.
    mutating func directional(_ direction: Direction, _ events: inout StepEvents) -> Bool {
        var p = player.position
        while true {
            p = p.moved(direction)
            guard p.inBounds else { break }
            if let t = transmissionIndex(at: p) {
                let removed = transmissions.remove(at: t)
                if !removed.fromScheduled { events.transmissionsKilled += 1 }
                return false
            }
            if let e = enemyIndex(at: p) {
                damageEnemy(at: e, by: player.attack)
                if enemies[e].hp == 0 {
                    let removed = enemies.remove(at: e)
                    if !removed.fromScheduled { events.enemiesKilled += 1 }
                }
                return false
            }
            if isBlock(p) { break }  // blocks stop the line
        }
        // No target: step one cell (the mask guarantees it is in bounds and not a block).
        let target = player.position.moved(direction)
        player.position = target
        if cells[target.index].content == .dataSiphon {
            player.dataSiphons += 1
            cells[target.index].content = .empty
            events.dataSiphonCollected = true
        }
        return target == exit
    }

    /// Lowers an enemy's hp (not below 0); a survivor is stunned. Removal is the caller's job.
    mutating func damageEnemy(at index: Int, by amount: Int) {
        enemies[index].hp = max(0, enemies[index].hp - amount)
        if enemies[index].hp > 0 { enemies[index].stunned = true }
    }

    /// Removes every enemy whose hp reached 0, counting kills (§7 `removeDead`).
    mutating func removeDeadEnemies(_ events: inout StepEvents) {
        for enemy in enemies where enemy.hp == 0 && !enemy.fromScheduled {
            events.enemiesKilled += 1
        }
        enemies.removeAll { $0.hp == 0 }
    }
}
