// One step (game-rules.md §4): validate, act, then either complete the stage
// or run the enemy phase, then the end-of-step death/trap check.

extension GameState {
    /// Executes one action (game-rules.md §4). Throws, changing nothing, when it is rejected (§3.3).
    public mutating func step(_ action: Int) throws(StepError) -> StepResult {
        guard outcome == .running else { throw .episodeOver }
        guard (0..<Rules.actionCount).contains(action) else { throw .actionOutOfRange(action) }
        guard isValid(action) else { throw .actionMasked(action) }

        let baseline = RewardBaseline(before: self, action: action)
        var events = StepEvents()
        let (exitReached, endsTurn) = performPlayerAction(action, &events)
        if exitReached {
            events.exitReached = true
            completeStage()
        } else if endsTurn {
            runEnemyPhase()
            if player.hp == 0 { outcome = .died }
        }
        applyEndOfStepCheck()
        recordOutcome(&events)
        let components = Rewards.components(baseline: baseline, after: self, events: events)
        stepIndex &+= 1
        return StepResult(components: components, events: events)
    }

    /// The player's part of the step. Returns whether the exit was reached and whether the turn ends.
    private mutating func performPlayerAction(_ action: Int, _ events: inout StepEvents)
        -> (exitReached: Bool, endsTurn: Bool)
    {
        switch action {
        case 0...3:
            let reached = directional(Direction(rawValue: action)!, &events)
            return (reached, !reached)
        case 4:
            events.siphonUsed = true
            siphon(&events)
            return (false, true)
        default:
            let program = Program(rawValue: action - 5)!
            if program == .reset && player.hp == 2 { events.resetAtTwo = true }
            player.credits -= program.creditCost  // paid first, then the effect
            player.energy -= program.energyCost
            runProgram(program, &events)
            return (program == .warp && player.position == exit, program == .wait)
        }
    }

    /// §11: a running game left with hp 0 or with no valid action is a death (trapped).
    private mutating func applyEndOfStepCheck() {
        if outcome == .running && (player.hp == 0 || !hasValidAction) {
            player.hp = 0
            outcome = .died
        }
    }

    /// The terminal flags of the event record (§13.1), read after everything else.
    private func recordOutcome(_ events: inout StepEvents) {
        events.gameWon = outcome == .won
        events.playerDied = outcome == .died
        events.diedToSiphonEnemy = events.playerDied && enemies.contains {
            $0.fromSiphon && $0.position.distance(to: player.position) == 1
        }
    }
}
