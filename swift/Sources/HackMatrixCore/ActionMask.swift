// Action validity (game-rules.md §3.2).

extension GameState {
    /// Whether `action` (0..27) may be taken now. False for every action once the game is over.
    public func isValid(_ action: Int) -> Bool {
        guard outcome == .running, (0..<Rules.actionCount).contains(action) else { return false }
        switch action {
        case 0...3: return directionIsValid(Direction(rawValue: action)!)
        case 4: return player.dataSiphons > 0
        default: return programIsValid(Program(rawValue: action - 5)!)
        }
    }

    /// Directions: the adjacent cell is in bounds and is not a block, unless an enemy stands on it.
    private func directionIsValid(_ direction: Direction) -> Bool {
        let target = player.position.moved(direction)
        return target.inBounds && (!isBlock(target) || enemyIndex(at: target) != nil)
    }

    private func programIsValid(_ program: Program) -> Bool {
        guard owned.contains(program), player.credits >= program.creditCost,
              player.energy >= program.energyCost
        else { return false }
        return programConditionHolds(program)
    }

    /// The per-program conditions of the §3.2 table.
    private func programConditionHolds(_ program: Program) -> Bool {
        switch program {
        case .push, .pull, .poly: return !enemies.isEmpty
        case .crash: return player.position.ring.contains { isBlock($0) || isOccupiedByEnemyOrTransmission($0) }
        case .warp: return !enemies.isEmpty || !transmissions.isEmpty
        case .wait, .step, .siphPlus: return true
        case .debug: return enemies.contains { isBlock($0.position) }
        case .row: return enemies.contains { $0.position.row == player.position.row }
        case .col: return enemies.contains { $0.position.col == player.position.col }
        case .undo: return !history.isEmpty
        case .exch: return player.credits >= 4
        case .show: return !showActivated
        case .reset: return player.hp < Rules.maxHP
        case .calm: return !tasksDisabled
        case .dBom: return enemies.contains { $0.type == .daemon }
        case .delay: return !transmissions.isEmpty
        case .antiV: return enemies.contains { $0.type == .virus }
        case .score: return stage < Rules.lastStage
        case .reduc:
            return cells.contains { $0.content == .block && !$0.siphoned && ($0.block?.spawnCount ?? 0) > 0 }
        case .atkPlus: return atkPlusUses < Rules.atkPlusPerStage
        case .hack: return cells.contains(where: \.siphoned)
        }
    }

    /// Whether at least one action is valid (a running game must always offer one, §11).
    var hasValidAction: Bool { (0..<Rules.actionCount).contains { isValid($0) } }
}
