// The game state of HackMatrix (game-rules.md §1–§2) as plain value types.
// Every quantity is an integer; the only floating point in the core is the
// reward (rewards.md) and the numeric observation (observation.md).

/// Constants of game-rules.md §0.
public enum Rules {
    public static let gridSize = 6
    public static let cellCount = 36
    public static let maxHP = 3
    public static let lastStage = 8
    public static let minInterval = 4
    public static let siphonDelay = 5
    public static let delayTurns = 3
    public static let atkPlusPerStage = 2
    public static let blockAttempts = 100
    public static let maxOccupants = 35
    public static let undoDepth = 4
    public static let actionCount = 28
    public static let corners = [0, 5, 30, 35]

    /// `BASE_INTERVAL(s) = 13 − s`.
    public static func baseInterval(stage: Int) -> Int { 13 - stage }
}

/// A board position. Row 0 is the bottom row; "up" increases the row.
public struct Position: Hashable, Sendable, Comparable {
    public var row: Int
    public var col: Int

    public init(row: Int, col: Int) {
        self.row = row
        self.col = col
    }

    public init(index: Int) {
        self.row = index / Rules.gridSize
        self.col = index % Rules.gridSize
    }

    /// Cell index `6·row + col`.
    public var index: Int { row * Rules.gridSize + col }

    public var inBounds: Bool { row >= 0 && row < Rules.gridSize && col >= 0 && col < Rules.gridSize }

    public func moved(_ direction: Direction) -> Position {
        Position(row: row + direction.delta.row, col: col + direction.delta.col)
    }

    /// Manhattan distance.
    public func distance(to other: Position) -> Int { abs(row - other.row) + abs(col - other.col) }

    public static func < (a: Position, b: Position) -> Bool { a.index < b.index }
}

/// The four directions, in direction order (also their action numbers).
public enum Direction: Int, CaseIterable, Sendable {
    case up = 0, down = 1, left = 2, right = 3

    public var delta: (row: Int, col: Int) {
        switch self {
        case .up: return (1, 0)
        case .down: return (-1, 0)
        case .left: return (0, -1)
        case .right: return (0, 1)
        }
    }
}

/// Enemy types in canonical order (game-rules.md §1.5).
public enum EnemyType: Int, CaseIterable, Sendable {
    case virus = 0, daemon = 1, glitch = 2, cryptog = 3

    public var maxHP: Int { self == .daemon ? 3 : 2 }
    /// Sub-steps per enemy phase.
    public var speed: Int { self == .virus ? 2 : 1 }
    public var name: String {
        switch self {
        case .virus: return "virus"
        case .daemon: return "daemon"
        case .glitch: return "glitch"
        case .cryptog: return "cryptog"
        }
    }
}

/// The 23 programs (game-rules.md §1.6). `rawValue` is `p`; the action is `5 + p`.
public enum Program: Int, CaseIterable, Sendable {
    case push = 0, pull, crash, warp, poly, wait, debug, row, col, undo, step, siphPlus, exch, show,
        reset, calm, dBom, delay, antiV, score, reduc, atkPlus, hack

    public var actionIndex: Int { rawValue + 5 }

    /// Lower-case protocol name (protocol.md §4.2).
    public var name: String { Program.names[rawValue] }
    public var creditCost: Int { Program.costs[rawValue].credits }
    public var energyCost: Int { Program.costs[rawValue].energy }
    /// `spawnCount` of a freshly generated program-bearing block holding this program.
    public var spawnCost: Int { Program.costs[rawValue].spawn }

    public static let names = [
        "push", "pull", "crash", "warp", "poly", "wait", "debug", "row", "col", "undo", "step", "siph+",
        "exch", "show", "reset", "calm", "d_bom", "delay", "anti-v", "score", "reduc", "atk+", "hack",
    ]

    static let costs: [(credits: Int, energy: Int, spawn: Int)] = [
        (0, 2, 4), (0, 2, 4), (3, 2, 6), (2, 2, 5), (1, 1, 3), (0, 1, 1), (3, 0, 4), (3, 1, 2),
        (3, 1, 2), (1, 0, 3), (0, 3, 4), (5, 0, 7), (4, 0, 3), (2, 0, 2), (0, 4, 2), (2, 4, 6),
        (3, 0, 4), (1, 2, 4), (3, 0, 4), (0, 5, 5), (2, 1, 3), (4, 4, 8), (2, 2, 4),
    ]
}

/// What a cell holds; exactly one (game-rules.md §1.2).
public enum CellContent: Sendable, Equatable {
    case empty, block, dataSiphon, exit
}

public enum BlockKind: Sendable, Equatable {
    case data, program, question
}

/// A block record (game-rules.md §1.3).
public struct Block: Sendable, Equatable {
    public var kind: BlockKind
    /// QUESTION only: true = it hides data. Data blocks have it true, program blocks false.
    public var hiddenIsData: Bool
    /// 1..9 for data-bearing blocks (0 otherwise).
    public var points: Int
    /// Program index 0..22 for program-bearing blocks (0 otherwise).
    public var program: Int
    public var spawnCount: Int

    public init(kind: BlockKind, hiddenIsData: Bool, points: Int, program: Int, spawnCount: Int) {
        self.kind = kind
        self.hiddenIsData = hiddenIsData
        self.points = points
        self.program = program
        self.spawnCount = spawnCount
    }

    public var isDataBearing: Bool { kind == .data || (kind == .question && hiddenIsData) }
    public var isProgramBearing: Bool { !isDataBearing }
}

/// One of the 36 cells (game-rules.md §1.2). A cell holds at most one kind of
/// resource: `credits` and `energy` are never both non-zero.
public struct Cell: Sendable, Equatable {
    public var content: CellContent = .empty
    /// Present iff `content == .block`.
    public var block: Block? = nil
    public var credits: Int = 0
    public var energy: Int = 0
    public var siphoned: Bool = false
    public var siphonCenter: Bool = false

    public init() {}

    public var isBlock: Bool { content == .block }
}

/// An enemy (game-rules.md §1.5).
public struct Enemy: Sendable, Equatable {
    public var type: EnemyType
    public var position: Position
    public var hp: Int
    /// 1 only during the enemy phase in which it appeared.
    public var disabled: Int = 0
    public var stunned: Bool = false
    public var fromSiphon: Bool = false
    public var fromScheduled: Bool = false
    /// Read only by the observation, and only for cryptogs.
    public var lastKnown: Position

    public init(
        type: EnemyType, position: Position, hp: Int? = nil, disabled: Int = 0, stunned: Bool = false,
        fromSiphon: Bool = false, fromScheduled: Bool = false, lastKnown: Position? = nil
    ) {
        self.type = type
        self.position = position
        self.hp = hp ?? type.maxHP
        self.disabled = disabled
        self.stunned = stunned
        self.fromSiphon = fromSiphon
        self.fromScheduled = fromScheduled
        self.lastKnown = lastKnown ?? position
    }
}

/// A transmission: an enemy about to appear (game-rules.md §1.4).
public struct Transmission: Sendable, Equatable {
    public var position: Position
    public var countdown: Int
    public var enemyType: EnemyType
    public var fromSiphon: Bool = false
    public var fromScheduled: Bool = false

    public init(
        position: Position, countdown: Int = 1, enemyType: EnemyType, fromSiphon: Bool = false,
        fromScheduled: Bool = false
    ) {
        self.position = position
        self.countdown = countdown
        self.enemyType = enemyType
        self.fromSiphon = fromSiphon
        self.fromScheduled = fromScheduled
    }
}

public struct Player: Sendable, Equatable {
    public var position: Position
    public var hp: Int = Rules.maxHP
    public var credits: Int = 0
    public var energy: Int = 0
    public var dataSiphons: Int = 0
    public var attack: Int = 1
    public var score: Int = 0

    public init(position: Position) { self.position = position }
}

/// The set of owned programs, as a 23-bit mask (acquisition order is not tracked).
public struct ProgramSet: Sendable, Equatable {
    public var bits: UInt32 = 0

    public init() {}
    public init(_ programs: [Int]) { for p in programs { insert(p) } }

    public func contains(_ program: Int) -> Bool { bits & (1 << UInt32(program)) != 0 }
    public mutating func insert(_ program: Int) { bits |= 1 << UInt32(program) }
    public func contains(_ program: Program) -> Bool { contains(program.rawValue) }
    /// Program indices ascending.
    public var sorted: [Int] { (0..<23).filter { contains($0) } }
}

/// What UNDO restores (game-rules.md §7.10).
public struct Snapshot: Sendable, Equatable {
    public var player: Player
    public var owned: ProgramSet
    public var turn: Int
    public var cells: [Cell]
    public var enemies: [Enemy]
    public var transmissions: [Transmission]
    public var showActivated: Bool
    public var tasksDisabled: Bool
    public var atkPlusUses: Int

    public init(
        player: Player, owned: ProgramSet, turn: Int, cells: [Cell], enemies: [Enemy],
        transmissions: [Transmission], showActivated: Bool, tasksDisabled: Bool, atkPlusUses: Int
    ) {
        self.player = player
        self.owned = owned
        self.turn = turn
        self.cells = cells
        self.enemies = enemies
        self.transmissions = transmissions
        self.showActivated = showActivated
        self.tasksDisabled = tasksDisabled
        self.atkPlusUses = atkPlusUses
    }
}

public enum Outcome: Sendable, Equatable {
    case running, died, won
}

/// The whole game state (game-rules.md §2).
public struct GameState: Sendable, Equatable {
    public var seed: UInt32
    public var stepIndex: UInt32 = 0
    public var outcome: Outcome = .running
    public var player: Player
    public var owned = ProgramSet()
    public var cells: [Cell] = Array(repeating: Cell(), count: Rules.cellCount)
    public var enemies: [Enemy] = []
    public var transmissions: [Transmission] = []
    public var stage: Int = 1
    public var turn: Int = 0
    public var interval: Int = 12
    public var nextTaskTurn: Int = 12
    public var pending: Int = 0
    public var showActivated = false
    public var tasksDisabled = false
    public var stepActive = false
    public var atkPlusUses = 0
    /// Position of the EXIT cell.
    public var exit: Position
    /// Oldest first; at most `Rules.undoDepth`.
    public var history: [Snapshot] = []

    /// A bare state: the given player cell and exit, every other cell empty.
    /// Stage generation and `setState` build on it.
    public init(seed: UInt32, player: Position, exit: Position) {
        self.seed = seed
        self.player = Player(position: player)
        self.exit = exit
        self.cells[exit.index].content = .exit
    }

    public subscript(_ p: Position) -> Cell {
        get { cells[p.index] }
        set { cells[p.index] = newValue }
    }

    public func enemyIndex(at p: Position) -> Int? { enemies.firstIndex { $0.position == p } }
    public func transmissionIndex(at p: Position) -> Int? { transmissions.firstIndex { $0.position == p } }
}
