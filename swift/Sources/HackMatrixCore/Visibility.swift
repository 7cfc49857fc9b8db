// What an observation may show (game-rules.md §12, observation.md §5.2, §6).

extension GameState {
    /// Whether a cryptog on `p` is seen: aligned with the player, or SHOW is active.
    private func cryptogVisible(at p: Position) -> Bool {
        showActivated || p.isAligned(with: player.position)
    }

    /// The index of the enemy an observation shows on cell `p`, or nil
    /// (first enemy in list order; a hidden cryptog shows none: observation.md §5.2).
    public func visibleEnemyIndex(at p: Position) -> Int? {
        guard let i = enemyIndex(at: p) else { return nil }
        if enemies[i].type == .cryptog && !cryptogVisible(at: p) { return nil }
        return i
    }

    /// Whether the resource on `p` is visible (no block, or siphoned).
    public func resourceVisible(at p: Position) -> Bool {
        !isBlock(p) || cells[p.index].siphoned
    }

    /// Last known positions of hidden cryptogs, in cell order of their current cells (observation.md §6).
    public func cryptogHints() -> [Position] {
        Position.allCells.compactMap { p in
            guard let i = enemyIndex(at: p), enemies[i].type == .cryptog, !cryptogVisible(at: p) else { return nil }
            return enemies[i].lastKnown
        }
    }
}
