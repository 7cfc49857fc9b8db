// The public face of the core: start a game, read the mask, take a step.
// The signatures are the contract the protocol layer and the tests build on.

/// Why a step was rejected (game-rules.md §3.3). Nothing changes on rejection.
public enum StepError: Error, Equatable, Sendable {
    case episodeOver
    case actionOutOfRange(Int)
    case actionMasked(Int)
}

/// The 15 reward components of rewards.md §1, in canonical order.
public struct RewardComponents: Sendable, Equatable {
    public static let names = [
        "step_penalty", "stage_completion", "score_gain", "kills", "data_siphon", "distance_shaping",
        "victory", "death_penalty", "resource_gain", "resource_holding", "damage_penalty", "hp_recovery",
        "siphon_quality", "program_waste", "siphon_death_penalty",
    ]
    /// Legacy camelCase keys of `reward_breakdown` (protocol.md §5.2), for components 2..15.
    public static let legacyNames = [
        "stage", "score", "kills", "dataSiphon", "distance", "victory", "death", "resourceGain",
        "resourceHolding", "damagePenalty", "hpRecovery", "siphonQuality", "programWaste",
        "siphonDeathPenalty",
    ]

    /// 15 values in canonical order; zeros are +0.0.
    public var values: [Double]

    public init(values: [Double] = Array(repeating: 0, count: 15)) { self.values = values }

    /// Left-to-right sum in canonical order (rewards.md §2).
    public var total: Double { values.reduce(0.0, +) }
}

/// The per-step event record of game-rules.md §13.1.
public struct StepEvents: Sendable, Equatable {
    public var exitReached = false
    public var gameWon = false
    public var playerDied = false
    public var enemiesKilled = 0
    public var transmissionsKilled = 0
    public var blocksSiphoned = 0
    public var programsAcquired = 0
    public var creditsGained = 0
    public var energyGained = 0
    public var dataSiphonCollected = false
    public var siphonUsed = false
    public var resetAtTwo = false
    public var diedToSiphonEnemy = false

    public init() {}
}

/// What one accepted step produced.
public struct StepResult: Sendable, Equatable {
    public var components: RewardComponents
    public var events: StepEvents

    public init(components: RewardComponents, events: StepEvents) {
        self.components = components
        self.events = events
    }

    public var reward: Double { components.total }
    public var done: Bool { events.playerDied || events.gameWon }
}

extension GameState {
    /// A new game from `seed` (game-rules.md §10.1).
    public static func newGame(seed: UInt32) -> GameState { reset(seed: seed) }

    /// The 28-entry action mask (game-rules.md §3.2); all false when the game is over.
    public func actionMask() -> [Bool] { (0..<Rules.actionCount).map { isValid($0) } }

    // `step(_:)` lives in Step.swift, the visibility helpers in Visibility.swift.
}

// `ObservationEncoder` (the numeric observation) lives in Observation.swift.
