// The numeric observation (observation.md §3–§5, §8): player (10), programs (23)
// and grid (6·6·42), concatenated into one float32 vector.

/// The numeric observation of observation.md: player (10), programs (23), grid (6·6·42).
public enum ObservationEncoder {
    public static let flatSize = 1545
    public static let playerSize = 10
    public static let programCount = 23
    public static let channels = 42
    static let gridOffset = playerSize + programCount

    /// `f32(raw / divisor)` saturated into [0, 1].
    @inline(__always)
    static func scaled(_ raw: Int, _ divisor: Int) -> Float {
        min(max(Float(Double(raw) / Double(divisor)), 0), 1)
    }

    /// The flat 1545-value float32 vector (observation.md §8).
    public static func encodeFlat(_ state: GameState) -> [Float] {
        var flat = [Float](repeating: 0, count: flatSize)
        let player = state.player
        flat[0] = scaled(player.position.row, 5)
        flat[1] = scaled(player.position.col, 5)
        flat[2] = scaled(player.hp, 3)
        flat[3] = scaled(player.credits, 50)
        flat[4] = scaled(player.energy, 50)
        flat[5] = scaled(state.stage - 1, 7)
        flat[6] = scaled(player.dataSiphons, 10)
        flat[7] = scaled(player.attack - 1, 2)
        flat[8] = state.showActivated ? 1 : 0
        flat[9] = state.tasksDisabled ? 1 : 0
        for p in 0..<programCount where state.owned.contains(p) { flat[playerSize + p] = 1 }
        for p in Position.allCells {
            encodeCell(state, p, into: &flat, at: gridOffset + channels * p.index)
        }
        return flat
    }

    /// The 42 channels of one cell (observation.md §5.1), written at `base`.
    private static func encodeCell(_ state: GameState, _ p: Position, into flat: inout [Float], at base: Int) {
        let cell = state.cells[p.index]
        if let i = state.visibleEnemyIndex(at: p) {
            let enemy = state.enemies[i]
            flat[base + enemy.type.rawValue] = 1
            flat[base + 4] = scaled(enemy.hp, 3)
            flat[base + 5] = enemy.stunned ? 1 : 0
            flat[base + 6] = enemy.fromSiphon ? 1 : 0
        }
        if cell.content == .block, let block = cell.block {
            switch block.kind {
            case .data:
                flat[base + 7] = 1
                flat[base + 10] = scaled(block.points, 9)
                flat[base + 35] = scaled(block.spawnCount, 9)
            case .program:
                flat[base + 8] = 1
                flat[base + 12 + block.program] = 1
                flat[base + 35] = scaled(block.spawnCount, 9)
            case .question:
                flat[base + 9] = 1  // a question block shows nothing of what it hides
            }
            flat[base + 11] = cell.siphoned ? 1 : 0
        }
        if let t = state.transmissionIndex(at: p) {
            flat[base + 36] = scaled(state.transmissions[t].countdown, 4)
        }
        if state.resourceVisible(at: p) {
            flat[base + 37] = scaled(cell.credits, 3)
            flat[base + 38] = scaled(cell.energy, 3)
        }
        flat[base + 39] = cell.content == .dataSiphon ? 1 : 0
        flat[base + 40] = cell.content == .exit ? 1 : 0
        flat[base + 41] = cell.siphonCenter ? 1 : 0
    }
}
