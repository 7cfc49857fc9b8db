// Board geometry of game-rules.md §1.1: neighbours, rings, crosses, alignment.

extension Position {
    /// In-bounds orthogonal neighbours in direction order (UP, DOWN, LEFT, RIGHT).
    /// (Looked up in tables built once, so path searches allocate nothing per cell.)
    public var neighbours: [Position] { Position.neighbourTable[index] }

    /// The cell followed by its neighbours: what a siphon from here drains.
    public var cross: [Position] { Position.crossTable[index] }

    /// The in-bounds cells of the surrounding 3×3 square, the cell itself excluded
    /// (Δrow outer loop, Δcol inner loop, both −1, 0, +1).
    public var ring: [Position] { Position.ringTable[index] }

    private static let neighbourTable: [[Position]] = allCells.map { p in
        Direction.allCases.map { p.moved($0) }.filter(\.inBounds)
    }
    private static let crossTable: [[Position]] = allCells.map { [$0] + neighbourTable[$0.index] }
    private static let ringTable: [[Position]] = allCells.map { p in
        var cells: [Position] = []
        for dr in -1...1 {
            for dc in -1...1 where dr != 0 || dc != 0 {
                let q = Position(row: p.row + dr, col: p.col + dc)
                if q.inBounds { cells.append(q) }
            }
        }
        return cells
    }

    /// Shares a row or a column with `other`.
    public func isAligned(with other: Position) -> Bool { row == other.row || col == other.col }

    /// The cells strictly between two aligned positions.
    func cellsStrictlyBetween(_ other: Position) -> [Position] {
        if row == other.row {
            let (lo, hi) = (min(col, other.col), max(col, other.col))
            return lo + 1 < hi ? (lo + 1..<hi).map { Position(row: row, col: $0) } : []
        }
        let (lo, hi) = (min(row, other.row), max(row, other.row))
        return lo + 1 < hi ? (lo + 1..<hi).map { Position(row: $0, col: col) } : []
    }

    static let allCells: [Position] = (0..<Rules.cellCount).map { Position(index: $0) }
    static let corners: [Position] = Rules.corners.map { Position(index: $0) }
}

extension GameState {
    func isBlock(_ p: Position) -> Bool { cells[p.index].content == .block }

    /// Whether any enemy or transmission stands on `p`.
    func isOccupiedByEnemyOrTransmission(_ p: Position) -> Bool {
        enemies.contains { $0.position == p } || transmissions.contains { $0.position == p }
    }
}
