// Path lengths on the board: the one breadth-first search of the core, used by
// the exit distance (game-rules.md §13.2, rewards.md §5) and by enemy movement
// (game-rules.md §8.5).

/// The 4-connected path length from `source` to every cell, −1 where no path
/// exists. Paths step only onto cells where `enterable` holds; `source` itself
/// is length 0 whether or not it is enterable.
func pathLengths(from source: Position, enterable: (Position) -> Bool) -> [Int] {
    var length = [Int](repeating: -1, count: Rules.cellCount)
    length[source.index] = 0
    var queue = [source]
    queue.reserveCapacity(Rules.cellCount)
    var head = 0
    while head < queue.count {
        let cell = queue[head]
        head += 1
        for n in cell.neighbours where length[n.index] < 0 && enterable(n) {
            length[n.index] = length[cell.index] + 1
            queue.append(n)
        }
    }
    return length
}

extension GameState {
    /// Shortest path length from `start` to the exit, stepping only on non-block
    /// cells (the exit itself is always enterable). nil when unreachable.
    public func exitDistance(from start: Position) -> Int? {
        let length = pathLengths(from: start) { $0 == exit || !isBlock($0) }[exit.index]
        return length >= 0 ? length : nil
    }
}
