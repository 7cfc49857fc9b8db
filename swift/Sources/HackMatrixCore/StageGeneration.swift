// Reset, stage generation and stage completion (game-rules.md §10).

extension GameState {
    /// The draws of the current step (stage generation during an action uses
    /// the step index before its increment).
    var random: KeyedRandom { KeyedRandom(seed: seed, step: stepIndex) }

    /// §10.1: a random start corner, a random starting bonus, then stage 1.
    static func reset(seed: UInt32) -> GameState {
        let random = KeyedRandom(seed: seed, step: 0)
        let start = Position(index: random.pickCell(.startCorner, from: Rules.corners)!)
        // The exit is placed properly by generateStage; any other corner will do until then.
        var state = GameState(seed: seed, player: start, exit: Position(index: start.index == 0 ? 35 : 0))
        switch random.index(.startBonus, 0, count: 3) {
        case 0: state.player.credits = 10
        case 1: state.player.energy = 11
        default: state.player.dataSiphons = 1
        }
        state.stage = 1
        state.interval = Rules.baseInterval(stage: 1)
        state.generateStage()
        return state
    }

    /// §10.2: a fresh board for the current stage. Player, programs, enemies,
    /// transmissions and pending siphon transmissions are kept.
    mutating func generateStage() {
        turn = 0
        nextTaskTurn = interval
        showActivated = false
        tasksDisabled = false
        stepActive = false
        atkPlusUses = 0
        history = []  // Deviation (§7.10): no UNDO across stages.
        cells = Array(repeating: Cell(), count: Rules.cellCount)

        let playerCell = player.position.index
        let exitCandidates = Rules.corners.filter { $0 != playerCell }
        exit = Position(index: random.pickCell(.exitCorner, from: exitCandidates)!)
        cells[exit.index].content = .exit
        for corner in Rules.corners where corner != playerCell && corner != exit.index {
            cells[corner].content = .dataSiphon
        }
        placeBlocks()
        placeResources()
        spawnTransmissions(
            count: stage, cellSite: .stageTransmissionCell, typeSite: .stageTransmissionType,
            fromSiphon: false, fromScheduled: false)
    }

    /// §10.3: up to 100 independent layout attempts; the first valid one wins.
    private mutating func placeBlocks() {
        let random = self.random
        let count = random.integer(.blockCount, 0, in: 5...11)
        let allowed = (0..<Rules.cellCount).filter { c in
            !Rules.corners.contains(c) && !isOccupiedByEnemyOrTransmission(Position(index: c))
        }
        for attempt in 0..<Rules.blockAttempts {
            let fold = 36 * attempt
            let chosen = random.pickCells(.blockCells, count, from: allowed, itemOffset: fold).sorted()
            let programRank = random.keyedOrder(.blockProgramRank, Array(0..<Program.allCases.count), itemOffset: fold)
            var nextProgram = 0
            var blocks: [(cell: Int, block: Block)] = []
            for c in chosen {
                let dataBearing = random.percent(.blockIsData, fold + c, below: 50)
                let question = random.percent(.blockIsQuestion, fold + c, below: 10)
                if dataBearing {
                    let points = random.integer(.blockPoints, fold + c, in: 1...9)
                    blocks.append((c, Block(kind: question ? .question : .data, hiddenIsData: true,
                                            points: points, program: 0, spawnCount: points)))
                } else {
                    let program = programRank[nextProgram]
                    nextProgram += 1
                    blocks.append((c, Block(kind: question ? .question : .program, hiddenIsData: false,
                                            points: 0, program: program,
                                            spawnCount: Program.costs[program].spawn)))
                }
            }
            if Self.layoutIsValid(blockCells: Set(chosen), exit: exit.index) {
                for (c, block) in blocks {
                    cells[c].content = .block
                    cells[c].block = block
                }
                return
            }
        }
        // Every attempt failed: this stage has no blocks (as in the original).
    }

    /// §10.4: every open cell is reachable from (0,0) without passing through
    /// the exit, and every block has an open neighbour (so it can be siphoned).
    static func layoutIsValid(blockCells: Set<Int>, exit: Int) -> Bool {
        var visited = [Bool](repeating: false, count: Rules.cellCount)
        visited[0] = true
        var queue = [0]
        var head = 0
        while head < queue.count {
            let cell = queue[head]
            head += 1
            for n in Position(index: cell).neighbours.map(\.index)
            where !blockCells.contains(n) && !visited[n] {
                visited[n] = true
                if n != exit { queue.append(n) }
            }
        }
        let connected = (0..<Rules.cellCount).allSatisfy { blockCells.contains($0) || visited[$0] }
        let siphonable = blockCells.allSatisfy { b in
            Position(index: b).neighbours.contains { !blockCells.contains($0.index) }
        }
        return connected && siphonable
    }

    /// §10.5: a resource on every EMPTY or DATA_SIPHON cell.
    private mutating func placeResources() {
        let random = self.random
        for c in 0..<Rules.cellCount where cells[c].content == .empty || cells[c].content == .dataSiphon {
            let amount = random.weighted454510(.resourceAmount, c)
            if random.percent(.resourceKind, c, below: 50) {
                cells[c].credits = amount
                cells[c].energy = 0
            } else {
                cells[c].energy = amount
                cells[c].credits = 0
            }
        }
    }

    /// §10.6: +1 hp, then the next stage, or victory after stage 8.
    mutating func completeStage() {
        player.hp = min(Rules.maxHP, player.hp + 1)
        if stage < Rules.lastStage {
            stage += 1
            interval = Rules.baseInterval(stage: stage)
            generateStage()
        } else {
            outcome = .won
        }
    }
}
