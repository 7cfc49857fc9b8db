// getState: writes a GameState in the canonical form of protocol.md §6.6, so
// that setState(getState()) reproduces the game and getState repeats itself.

import HackMatrixCore

public enum StateEncoder {
    public static func write(_ state: GameState, to out: inout JSONWriter) {
        out.beginObject()
        writeBoard(
            player: state.player, enemies: state.enemies, transmissions: state.transmissions, cells: state.cells,
            owned: state.owned, turn: state.turn, showActivated: state.showActivated,
            tasksDisabled: state.tasksDisabled, atkPlusUses: state.atkPlusUses, exit: state.exit, isSnapshot: false,
            to: &out)
        out.key("stage"); out.int(state.stage)
        out.key("scheduledTaskInterval"); out.int(state.interval)
        out.key("nextScheduledTaskTurn"); out.int(state.nextTaskTurn)
        out.key("pendingSiphonTransmissions"); out.int(state.pending)
        out.key("stepActive"); out.bool(state.stepActive)
        out.key("seed"); out.int(Int(state.seed))
        out.key("stepIndex"); out.int(Int(state.stepIndex))
        out.key("gameWon"); out.bool(state.outcome == .won)
        out.key("undoHistory")
        out.beginArray()
        for snapshot in state.history {
            out.element()
            out.beginObject()
            writeBoard(
                player: snapshot.player, enemies: snapshot.enemies, transmissions: snapshot.transmissions,
                cells: snapshot.cells, owned: snapshot.owned, turn: snapshot.turn,
                showActivated: snapshot.showActivated, tasksDisabled: snapshot.tasksDisabled,
                atkPlusUses: snapshot.atkPlusUses, exit: state.exit, isSnapshot: true, to: &out)
            out.endObject()
        }
        out.endArray()
        out.endObject()
    }

    public static func json(_ state: GameState) -> String {
        var out = JSONWriter()
        write(state, to: &out)
        return out.string
    }

    /// The members a state and a snapshot share, without the braces.
    ///
    /// A snapshot's origin flags are written as false whatever the engine
    /// holds: UNDO clears them on restore (game-rules.md §7.10), so they carry
    /// no information, and protocol.md §6.5 requires them false on load.
    static func writeBoard(
        player: Player, enemies: [Enemy], transmissions: [Transmission], cells: [Cell], owned: ProgramSet, turn: Int,
        showActivated: Bool, tasksDisabled: Bool, atkPlusUses: Int, exit: Position, isSnapshot: Bool,
        to out: inout JSONWriter
    ) {
        out.key("player")
        out.beginObject()
        out.key("row"); out.int(player.position.row)
        out.key("col"); out.int(player.position.col)
        out.key("hp"); out.int(player.hp)
        out.key("credits"); out.int(player.credits)
        out.key("energy"); out.int(player.energy)
        out.key("dataSiphons"); out.int(player.dataSiphons)
        out.key("attackDamage"); out.int(player.attack)
        out.key("score"); out.int(player.score)
        out.endObject()

        out.key("enemies")
        out.beginArray()
        for enemy in enemies {
            out.element()
            out.beginObject()
            out.key("type"); out.string(enemy.type.name)
            out.key("row"); out.int(enemy.position.row)
            out.key("col"); out.int(enemy.position.col)
            out.key("hp"); out.int(enemy.hp)
            out.key("stunned"); out.bool(enemy.stunned)
            out.key("spawnedFromSiphon"); out.bool(enemy.fromSiphon && !isSnapshot)
            out.key("isFromScheduledTask"); out.bool(enemy.fromScheduled && !isSnapshot)
            out.key("disabledTurns"); out.int(enemy.disabled)
            if enemy.type == .cryptog {
                out.key("lastKnownRow"); out.int(enemy.lastKnown.row)
                out.key("lastKnownCol"); out.int(enemy.lastKnown.col)
            } else {
                out.key("lastKnownRow"); out.null()
                out.key("lastKnownCol"); out.null()
            }
            out.endObject()
        }
        out.endArray()

        out.key("transmissions")
        out.beginArray()
        for transmission in transmissions {
            out.element()
            out.beginObject()
            out.key("row"); out.int(transmission.position.row)
            out.key("col"); out.int(transmission.position.col)
            out.key("turnsRemaining"); out.int(transmission.countdown)
            out.key("enemyType"); out.string(transmission.enemyType.name)
            out.key("isFromScheduledTask"); out.bool(transmission.fromScheduled && !isSnapshot)
            out.key("spawnedFromSiphon"); out.bool(transmission.fromSiphon && !isSnapshot)
            out.endObject()
        }
        out.endArray()

        out.key("blocks")
        out.beginArray()
        for (index, cell) in cells.enumerated() where cell.content == .block {
            guard let block = cell.block else { continue }
            let position = Position(index: index)
            out.element()
            out.beginObject()
            out.key("row"); out.int(position.row)
            out.key("col"); out.int(position.col)
            out.key("type"); out.raw("\""); out.raw(Names.blockKindName(block.kind)); out.raw("\"")
            out.key("siphoned"); out.bool(cell.siphoned)
            out.key("spawnCount"); out.int(block.spawnCount)
            if block.kind == .question {
                out.key("isData"); out.bool(block.hiddenIsData)
            }
            if block.isDataBearing {
                out.key("points"); out.int(block.points)
            } else {
                out.key("programType"); out.string(Program.names[block.program])
                out.key("programActionIndex"); out.int(block.program + 5)
            }
            out.endObject()
        }
        out.endArray()

        out.key("resources")
        out.beginArray()
        for (index, cell) in cells.enumerated()
        where cell.content == .dataSiphon || cell.credits > 0 || cell.energy > 0 {
            let position = Position(index: index)
            out.element()
            out.beginObject()
            out.key("row"); out.int(position.row)
            out.key("col"); out.int(position.col)
            out.key("credits"); out.int(cell.credits)
            out.key("energy"); out.int(cell.energy)
            out.key("dataSiphon"); out.bool(cell.content == .dataSiphon)
            out.endObject()
        }
        out.endArray()

        out.key("ownedPrograms")
        out.beginArray()
        for program in owned.sorted {
            out.element()
            out.int(program + 5)
        }
        out.endArray()

        out.key("turn"); out.int(turn)
        out.key("showActivated"); out.bool(showActivated)
        out.key("scheduledTasksDisabled"); out.bool(tasksDisabled)
        out.key("exit")
        out.beginObject()
        out.key("row"); out.int(exit.row)
        out.key("col"); out.int(exit.col)
        out.endObject()

        out.key("cellFlags")
        out.beginArray()
        for (index, cell) in cells.enumerated() where cell.siphoned || cell.siphonCenter {
            let position = Position(index: index)
            out.element()
            out.beginObject()
            out.key("row"); out.int(position.row)
            out.key("col"); out.int(position.col)
            out.key("siphoned"); out.bool(cell.siphoned)
            out.key("siphonCenter"); out.bool(cell.siphonCenter)
            out.endObject()
        }
        out.endArray()
        out.key("atkPlusUsesThisStage"); out.int(atkPlusUses)
    }
}
