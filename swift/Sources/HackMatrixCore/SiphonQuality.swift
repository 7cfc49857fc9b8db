// Siphon quality (game-rules.md §13.3, rewards.md §6): was there a standing
// cell whose cross took blocks of the same worth and strictly more resources?

public struct SiphonQuality: Sendable, Equatable {
    public var optimal: Bool
    public var missedCredits: Int
    public var missedEnergy: Int
}

/// What a siphon from one standing cell would take.
struct SiphonYield: Equatable {
    var credits = 0
    var energy = 0
    /// Points of data-bearing blocks, sorted (a multiset).
    var dataValues: [Int] = []
    /// New (unowned) programs, as a bit set.
    var programs = ProgramSet()

    var takesBlocks: Bool { !dataValues.isEmpty || programs.bits != 0 }
}

extension GameState {
    func siphonYield(standingOn q: Position) -> SiphonYield {
        var yield = SiphonYield()
        guard !isBlock(q) else { return yield }
        for x in q.cross where !cells[x.index].siphoned {
            let cell = cells[x.index]
            if cell.content == .block, let block = cell.block {
                if block.isDataBearing {
                    yield.dataValues.append(block.points)
                } else if !owned.contains(block.program) {
                    yield.programs.insert(block.program)
                }
            } else {
                yield.credits += cell.credits
                yield.energy += cell.energy
            }
        }
        yield.dataValues.sort()
        return yield
    }

    /// Evaluated on the state before the siphon changes anything.
    public func siphonQuality() -> SiphonQuality {
        let current = siphonYield(standingOn: player.position)
        var better = false
        var bestCredits = current.credits
        var bestEnergy = current.energy
        for q in siphonCandidates(current) {
            let y = siphonYield(standingOn: q)
            guard y.dataValues == current.dataValues, y.programs == current.programs,
                  y.credits >= current.credits, y.energy >= current.energy,
                  y.credits > current.credits || y.energy > current.energy
            else { continue }
            better = true
            bestCredits = max(bestCredits, y.credits)
            bestEnergy = max(bestEnergy, y.energy)
        }
        return SiphonQuality(
            optimal: !better, missedCredits: bestCredits - current.credits,
            missedEnergy: bestEnergy - current.energy)
    }

    /// Standing cells that reach every unsiphoned block of the player's cross
    /// (when the siphon takes blocks), else every non-block cell.
    private func siphonCandidates(_ current: SiphonYield) -> [Position] {
        let open = Position.allCells.filter { !isBlock($0) }
        guard current.takesBlocks else { return open }
        let blocks = player.position.cross.filter { isBlock($0) && !cells[$0.index].siphoned }
        return open.filter { q in blocks.allSatisfy { $0.distance(to: q) <= 1 } }
    }
}
