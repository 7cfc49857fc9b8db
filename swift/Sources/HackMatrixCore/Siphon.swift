// The siphon action (game-rules.md §6): drain the whole cross around the player.

extension GameState {
    mutating func siphon(_ events: inout StepEvents) {
        let center = player.position
        cells[center.index].siphonCenter = true
        for x in center.cross where !cells[x.index].siphoned {
            drainCell(x, &events)
            cells[x.index].siphoned = true  // blocks and open cells alike
        }
        player.dataSiphons -= 1
        interval = max(Rules.minInterval, interval - 1)  // permanent for this stage
        nextTaskTurn += Rules.siphonDelay  // temporary relief
    }

    /// A block yields its data or program and queues its transmissions; an open cell yields its resource.
    private mutating func drainCell(_ x: Position, _ events: inout StepEvents) {
        var cell = cells[x.index]
        if cell.content == .block, var block = cell.block {
            events.blocksSiphoned += 1
            if block.isDataBearing {
                player.score += block.points
            } else if !owned.contains(block.program) {
                owned.insert(block.program)
                events.programsAcquired += 1
            }
            pending += block.spawnCount
            block.kind = block.isDataBearing ? .data : .program  // a question block is revealed
            block.spawnCount = 0
            cell.block = block
        } else if cell.credits > 0 {
            player.credits += cell.credits
            events.creditsGained += cell.credits
            cell.credits = 0
        } else if cell.energy > 0 {
            player.energy += cell.energy
            events.energyGained += cell.energy
            cell.energy = 0
        }
        cells[x.index] = cell
    }
}
