// The shared transmission placement of game-rules.md §9.

extension GameState {
    /// Appends up to `count` transmissions (countdown 1) on empty cells,
    /// out of the player's line of fire first, each group in key order.
    mutating func spawnTransmissions(
        count: Int, cellSite: Site, typeSite: Site, fromSiphon: Bool, fromScheduled: Bool
    ) {
        guard count > 0 else { return }
        let random = self.random
        var ranked: [(inLine: Int, key: UInt32, cell: Int)] = []
        for p in Position.allCells where isEmptyForSpawning(p) {
            ranked.append((isInLineOfFire(p) ? 1 : 0, random.draw(cellSite, p.index), p.index))
        }
        ranked.sort { ($0.inLine, $0.key, $0.cell) < ($1.inLine, $1.key, $1.cell) }
        for (j, entry) in ranked.prefix(count).enumerated() {
            let type = EnemyType(rawValue: random.index(typeSite, j, count: 4))!
            transmissions.append(Transmission(
                position: Position(index: entry.cell), countdown: 1, enemyType: type,
                fromSiphon: fromSiphon, fromScheduled: fromScheduled))
        }
    }

    /// §9.1: not the player's cell, no enemy, no transmission, not a block.
    private func isEmptyForSpawning(_ p: Position) -> Bool {
        p != player.position && !isBlock(p) && !isOccupiedByEnemyOrTransmission(p)
    }

    /// §9.2: aligned with the player, with no enemy or block strictly between.
    private func isInLineOfFire(_ p: Position) -> Bool {
        guard p.isAligned(with: player.position) else { return false }
        return player.position.cellsStrictlyBetween(p).allSatisfy { x in
            !isBlock(x) && enemyIndex(at: x) == nil
        }
    }
}
