// The 15 reward components (rewards.md), computed from the values before the
// action and the state and events after the whole step.

/// What the reward needs from the state before the action (rewards.md §3).
struct RewardBaseline {
    var score: Int
    var hp: Int
    var credits: Int
    var energy: Int
    /// The stage being played; the completed stage when the exit is reached.
    var stage: Int
    /// Exit distance before the action, "no path" read as 0.
    var exitDistance: Int
    /// Only for the siphon action.
    var siphonQuality: SiphonQuality?

    init(before state: GameState, action: Int) {
        score = state.player.score
        hp = state.player.hp
        credits = state.player.credits
        energy = state.player.energy
        stage = state.stage
        exitDistance = state.exitDistance(from: state.player.position) ?? 0
        siphonQuality = action == 4 ? state.siphonQuality() : nil
    }
}

enum Rewards {
    /// Stage-completion rewards; index 0 pays for completing stage 1.
    static let stageTable: [Double] = [1, 2, 4, 8, 16, 32, 64, 100]

    static func components(baseline b: RewardBaseline, after state: GameState, events ev: StepEvents)
        -> RewardComponents
    {
        let a = state.player
        let died = ev.playerDied
        var v = [Double](repeating: 0, count: 15)
        v[0] = -0.01
        if ev.exitReached { v[1] = stageTable[b.stage - 1] }
        v[2] = Double(a.score - b.score) * 0.5
        v[3] = Double(ev.enemiesKilled + ev.transmissionsKilled) * 0.3
        if ev.dataSiphonCollected { v[4] = 1.0 }
        v[5] = Double(max(distanceDelta(b, state, ev), 0)) * 0.05
        if ev.gameWon { v[6] = 500.0 + Double(a.score) * 100.0 }
        if died {
            var completed = 0.0
            for s in 0..<max(0, state.stage - 1) { completed += stageTable[s] }
            v[7] = -completed * 0.5
        }
        v[8] = Double(a.credits - b.credits) * 0.05 + Double(a.energy - b.energy) * 0.05
        if ev.exitReached { v[9] = Double(a.credits) * 0.01 + Double(a.energy) * 0.01 }
        let lost = b.hp - a.hp
        if lost > 0 { v[10] = Double(lost) * -1.0 }
        if lost < 0 { v[11] = Double(-lost) * 1.0 }
        if let q = b.siphonQuality, !q.optimal {
            v[12] = -0.5 * (Double(q.missedCredits) * 0.05 + Double(q.missedEnergy) * 0.05)
        }
        if ev.resetAtTwo { v[13] = -0.3 }
        if ev.diedToSiphonEnemy { v[14] = -10.0 }
        // Zero components are +0.0, never -0.0 (rewards.md §4.8).
        return RewardComponents(values: v.map { $0 == 0 ? 0.0 : $0 })
    }

    /// rewards.md §4.6: 0 on death, the whole remaining distance on reaching the exit.
    private static func distanceDelta(_ b: RewardBaseline, _ state: GameState, _ ev: StepEvents) -> Int {
        if ev.playerDied { return 0 }
        if ev.exitReached { return b.exitDistance }
        return b.exitDistance - (state.exitDistance(from: state.player.position) ?? 0)
    }
}
