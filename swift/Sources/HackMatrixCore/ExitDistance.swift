// Path distance to the exit (game-rules.md §13.2, rewards.md §5).

extension GameState {
    /// Shortest 4-connected path length from `start` to the exit, stepping only on
    /// non-block cells (the exit itself is always enterable). nil when unreachable.
    public func exitDistance(from start: Position) -> Int? {
        if start == exit { return 0 }
        var distance = [Int](repeating: -1, count: Rules.cellCount)
        distance[start.index] = 0
        var queue = [start]
        var head = 0
        while head < queue.count {
            let cell = queue[head]
            head += 1
            for n in cell.neighbours where distance[n.index] < 0 {
                if n == exit { return distance[cell.index] + 1 }
                if isBlock(n) { continue }
                distance[n.index] = distance[cell.index] + 1
                queue.append(n)
            }
        }
        return nil
    }
}
