// The JSON observation object of protocol.md §4, with the visibility rules
// of observation.md §5.2 (hidden cryptogs, question blocks, covered resources).

import HackMatrixCore

public enum ObservationWriter {
    public static func write(_ state: GameState, to out: inout JSONWriter) {
        let player = state.player
        out.beginObject()
        out.key("playerRow"); out.int(player.position.row)
        out.key("playerCol"); out.int(player.position.col)
        out.key("playerHP"); out.int(player.hp)
        out.key("credits"); out.int(player.credits)
        out.key("energy"); out.int(player.energy)
        out.key("stage"); out.int(state.stage)
        out.key("turn"); out.int(state.turn)
        out.key("dataSiphons"); out.int(player.dataSiphons)
        out.key("baseAttack"); out.int(player.attack)
        out.key("score"); out.int(player.score)
        out.key("showActivated"); out.bool(state.showActivated)
        out.key("scheduledTasksDisabled"); out.bool(state.tasksDisabled)
        out.key("ownedPrograms")
        out.beginArray()
        for program in state.owned.sorted {
            out.element()
            out.int(program + 5)
        }
        out.endArray()

        out.key("cells")
        out.beginArray()
        for row in 0..<Rules.gridSize {
            out.element()
            out.beginArray()
            for col in 0..<Rules.gridSize {
                out.element()
                writeCell(Position(row: row, col: col), of: state, to: &out)
            }
            out.endArray()
        }
        out.endArray()

        out.key("cryptogHints")
        out.beginArray()
        for hint in state.cryptogHints() {
            out.element()
            out.beginObject()
            out.key("row"); out.int(hint.row)
            out.key("col"); out.int(hint.col)
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

    static func writeCell(_ position: Position, of state: GameState, to out: inout JSONWriter) {
        let cell = state[position]
        out.beginObject()
        out.key("row"); out.int(position.row)
        out.key("col"); out.int(position.col)
        out.key("isDataSiphon"); out.bool(cell.content == .dataSiphon)
        out.key("isExit"); out.bool(cell.content == .exit)
        out.key("siphonCenter"); out.bool(cell.siphonCenter)

        if let index = state.visibleEnemyIndex(at: position) {
            let enemy = state.enemies[index]
            out.key("enemy")
            out.beginObject()
            out.key("type"); out.raw(Names.quotedEnemyTypes[enemy.type.rawValue])
            out.key("hp"); out.int(enemy.hp)
            out.key("isStunned"); out.bool(enemy.stunned)
            out.key("spawnedFromSiphon"); out.bool(enemy.fromSiphon)
            out.endObject()
        }

        if cell.content == .block, let block = cell.block {
            out.key("block")
            out.beginObject()
            out.key("blockType"); out.raw("\""); out.raw(Names.blockKindName(block.kind)); out.raw("\"")
            out.key("isSiphoned"); out.bool(cell.siphoned)
            switch block.kind {
            case .data:
                out.key("points"); out.int(block.points)
                out.key("transmissionSpawnCount"); out.int(block.spawnCount)
            case .program:
                out.key("points"); out.int(0)
                out.key("programType"); out.raw(Names.quotedPrograms[block.program])
                out.key("programActionIndex"); out.int(block.program + 5)
                out.key("transmissionSpawnCount"); out.int(block.spawnCount)
            case .question:
                break  // never shows what it hides (game-rules.md §12)
            }
            out.endObject()
        }

        if let index = state.transmissionIndex(at: position) {
            let transmission = state.transmissions[index]
            out.key("transmission")
            out.beginObject()
            out.key("turnsUntilSpawn"); out.int(transmission.countdown)
            if state.showActivated {
                out.key("enemyType"); out.raw(Names.quotedEnemyTypes[transmission.enemyType.rawValue])
            }
            out.endObject()
        }

        if (cell.credits > 0 || cell.energy > 0) && state.resourceVisible(at: position) {
            if cell.credits > 0 { out.key("credits"); out.int(cell.credits) }
            if cell.energy > 0 { out.key("energy"); out.int(cell.energy) }
        }
        out.endObject()
    }
}
