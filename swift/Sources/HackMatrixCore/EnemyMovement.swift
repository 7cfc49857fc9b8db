// Deterministic enemy movement (game-rules.md §8.5): a shortest-path first
// step avoiding others, then one ignoring them, then a greedy fallback.

extension GameState {
    mutating func moveEnemy(at index: Int) {
        let enemy = enemies[index]
        var occupied = [Bool](repeating: false, count: Rules.cellCount)
        for (j, other) in enemies.enumerated() where j != index { occupied[other.position.index] = true }
        for t in transmissions { occupied[t.position.index] = true }
        let mayCrossBlocks = enemy.type == .glitch
        let start = enemy.position
        let target = player.position

        func passable(_ x: Position) -> Bool { mayCrossBlocks || !isBlock(x) }

        // Route 1: a shortest path that avoids other enemies and transmissions.
        var destination = firstStep(from: start, to: target) { passable($0) && ($0 == target || !occupied[$0.index]) }
        // Route 2: the unobstructed shortest path, if its first cell is free.
        if destination == nil, let step = firstStep(from: start, to: target, enterable: passable),
            !occupied[step.index]
        {
            destination = step
        }
        // Route 3: the free neighbour closest to the player (possibly farther than now).
        if destination == nil {
            for n in start.neighbours
            where passable(n) && !occupied[n.index]
                && (destination == nil || n.distance(to: target) < destination!.distance(to: target))
            {
                destination = n
            }
        }
        guard let destination else { return }
        enemies[index].position = destination
        if enemy.type == .cryptog && destination.isAligned(with: target) {
            enemies[index].lastKnown = destination
        }
    }

    /// The neighbour of `start` with the smallest path length to `target` (direction order on
    /// ties), where paths use only enterable cells and never pass through `start`.
    private func firstStep(from start: Position, to target: Position, enterable: (Position) -> Bool) -> Position? {
        guard enterable(target) else { return nil }
        let length = pathLengths(from: target) { $0 != start && enterable($0) }
        var best: Position?
        for n in start.neighbours
        where length[n.index] >= 0
            && (best == nil || length[n.index] < length[best!.index])
        {
            best = n
        }
        return best
    }
}
