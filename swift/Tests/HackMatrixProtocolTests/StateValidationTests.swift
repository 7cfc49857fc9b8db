// setState validation (protocol.md §6): every rejection names its path and
// leaves the game as it was; the allowed combinations load.
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol
import HackMatrixTestSupport

final class StateValidationTests: XCTestCase {
    /// A running game that every rejected request must leave alone.
    var session = Session()

    override func setUp() {
        session = Session()
        send(&session, "{\"action\":\"reset\",\"seed\":21}")
    }

    /// `extra` is spliced into a minimal valid state (player at (0,0)).
    func reject(_ extra: String, player: String = "{\"row\":0,\"col\":0}", path: String, reason: String? = nil,
                file: StaticString = #filePath, line: UInt = #line) {
        let state = "{\"player\":\(player)\(extra.isEmpty ? "" : ",")\(extra)}"
        let before = session.game
        let r = send(&session, setStateLine(state), file: file, line: line)
        XCTAssertEqual(errorCode(r), "invalid_state", "\(state) -> \(r)", file: file, line: line)
        XCTAssertEqual(r["error"]?["details"]?["path"]?.string, path, "\(state) -> \(r)", file: file, line: line)
        if let reason { XCTAssertEqual(r["error"]?["details"]?["reason"]?.string, reason, file: file, line: line) }
        XCTAssertEqual(session.game, before, file: file, line: line)
    }

    @discardableResult
    func accept(_ extra: String, player: String = "{\"row\":0,\"col\":0}", file: StaticString = #filePath, line: UInt = #line) -> GameState? {
        let state = "{\"player\":\(player)\(extra.isEmpty ? "" : ",")\(extra)}"
        let r = send(&session, setStateLine(state), file: file, line: line)
        XCTAssertNil(r["error"], "\(state) -> \(r)", file: file, line: line)
        return r["error"] == nil ? session.game : nil
    }

    func testDefaults() throws {
        let state = try XCTUnwrap(accept(""))
        XCTAssertEqual(state.player.hp, 3)
        XCTAssertEqual(state.player.attack, 1)
        XCTAssertEqual(state.stage, 1)
        XCTAssertEqual(state.exit, Position(row: 5, col: 5))
        XCTAssertEqual(state.interval, 12)
        XCTAssertEqual(state.nextTaskTurn, 12)
        XCTAssertEqual(state.seed, 0)
        XCTAssertEqual(state.stepIndex, 0)
        XCTAssertEqual(state.outcome, .running)
        XCTAssertEqual(state[Position(row: 5, col: 5)].content, .exit)
        XCTAssertEqual(try XCTUnwrap(accept("\"scheduledTaskInterval\":7")).nextTaskTurn, 7)
        // null means absent.
        XCTAssertEqual(try XCTUnwrap(accept("\"stage\":null,\"enemies\":null", player: "{\"row\":0,\"col\":0,\"hp\":null}")).player.hp, 3)
    }

    func testTopLevelShapeAndUnknownKeys() {
        reject("", player: "null", path: "state.player", reason: "missing")
        reject("", player: "[]", path: "state.player", reason: "wrong type")
        reject("\"stepcount\":1", path: "state.stepcount", reason: "unknown key")
        reject("", player: "{\"row\":0,\"col\":0,\"mana\":1}", path: "state.player.mana", reason: "unknown key")
        reject("\"enemies\":{}", path: "state.enemies", reason: "wrong type")
        reject("\"enemies\":[1]", path: "state.enemies[0]", reason: "wrong type")
    }

    func testPlayerFields() {
        reject("", player: "{\"row\":9,\"col\":0}", path: "state.player.row", reason: "out of range")
        reject("", player: "{\"row\":0}", path: "state.player.col", reason: "missing")
        reject("", player: "{\"row\":0,\"col\":-1}", path: "state.player.col", reason: "out of range")
        reject("", player: "{\"row\":0,\"col\":0,\"hp\":4}", path: "state.player.hp", reason: "out of range")
        reject("", player: "{\"row\":0,\"col\":0,\"credits\":-1}", path: "state.player.credits", reason: "out of range")
        reject("", player: "{\"row\":0,\"col\":0,\"energy\":1000001}", path: "state.player.energy", reason: "out of range")
        reject("", player: "{\"row\":0,\"col\":0,\"score\":1e30}", path: "state.player.score", reason: "out of range")
        reject("", player: "{\"row\":0,\"col\":0,\"attackDamage\":0}", path: "state.player.attackDamage", reason: "out of range")
        reject("", player: "{\"row\":0,\"col\":0,\"credits\":2.5}", path: "state.player.credits", reason: "wrong type")
        reject("", player: "{\"row\":0,\"col\":0,\"credits\":\"2\"}", path: "state.player.credits", reason: "wrong type")
        reject("", player: "{\"row\":0,\"col\":0,\"credits\":true}", path: "state.player.credits", reason: "wrong type")
        XCTAssertEqual(accept("", player: "{\"row\":0,\"col\":0,\"credits\":1000000,\"energy\":3e0,\"dataSiphons\":2.0}")?.player.credits, 1_000_000)
        XCTAssertEqual(session.game?.player.energy, 3)
        XCTAssertEqual(session.game?.player.dataSiphons, 2)
    }

    func testScalarFields() {
        reject("\"stage\":0", path: "state.stage")
        reject("\"stage\":9", path: "state.stage")
        reject("\"turn\":-1", path: "state.turn")
        reject("\"scheduledTaskInterval\":3", path: "state.scheduledTaskInterval")
        reject("\"scheduledTaskInterval\":13", path: "state.scheduledTaskInterval")
        reject("\"nextScheduledTaskTurn\":1000001", path: "state.nextScheduledTaskTurn")
        reject("\"pendingSiphonTransmissions\":-2", path: "state.pendingSiphonTransmissions")
        reject("\"atkPlusUsesThisStage\":3", path: "state.atkPlusUsesThisStage")
        reject("\"seed\":4294967296", path: "state.seed")
        reject("\"stepIndex\":-1", path: "state.stepIndex")
        reject("\"showActivated\":1", path: "state.showActivated", reason: "wrong type")
        reject("\"stepActive\":\"true\"", path: "state.stepActive", reason: "wrong type")
        XCTAssertEqual(accept("\"seed\":4294967295,\"stepIndex\":4294967295")?.stepIndex, UInt32.max)
    }

    func testOwnedPrograms() {
        reject("\"ownedPrograms\":[4]", path: "state.ownedPrograms[0]", reason: "out of range")
        reject("\"ownedPrograms\":[5,28]", path: "state.ownedPrograms[1]", reason: "out of range")
        reject("\"ownedPrograms\":[10,10]", path: "state.ownedPrograms[1]")
        reject("\"ownedPrograms\":[\"wait\"]", path: "state.ownedPrograms[0]", reason: "wrong type")
        XCTAssertEqual(accept("\"ownedPrograms\":[27,5,10]")?.owned.sorted, [0, 5, 22])
    }

    func testEnemies() {
        reject("\"enemies\":[{\"type\":\"dragon\",\"row\":1,\"col\":1,\"hp\":1}]", path: "state.enemies[0].type", reason: "unknown name")
        reject("\"enemies\":[{\"row\":1,\"col\":1,\"hp\":1}]", path: "state.enemies[0].type", reason: "missing")
        reject("\"enemies\":[{\"type\":\"virus\",\"row\":1,\"col\":1}]", path: "state.enemies[0].hp", reason: "missing")
        reject("\"enemies\":[{\"type\":\"virus\",\"row\":1,\"col\":1,\"hp\":1},{\"type\":\"daemon\",\"row\":2,\"col\":2,\"hp\":4}]",
               path: "state.enemies[1].hp", reason: "out of range")
        reject("\"enemies\":[{\"type\":\"virus\",\"row\":1,\"col\":1,\"hp\":3}]", path: "state.enemies[0].hp")
        reject("\"enemies\":[{\"type\":\"virus\",\"row\":1,\"col\":1,\"hp\":0}]", path: "state.enemies[0].hp")
        reject("\"enemies\":[{\"type\":\"virus\",\"row\":1,\"col\":6,\"hp\":1}]", path: "state.enemies[0].col")
        reject("\"enemies\":[{\"type\":\"virus\",\"row\":1,\"col\":1,\"hp\":1,\"disabledTurns\":2}]", path: "state.enemies[0].disabledTurns")
        reject("\"enemies\":[{\"type\":\"cryptog\",\"row\":1,\"col\":1,\"hp\":1,\"lastKnownRow\":2}]",
               path: "state.enemies[0].lastKnownRow", reason: "inconsistent")
        reject("\"enemies\":[{\"type\":\"virus\",\"row\":1,\"col\":1,\"hp\":1,\"lastKnownRow\":7,\"lastKnownCol\":0}]",
               path: "state.enemies[0].lastKnownRow", reason: "out of range")
        let state = accept("\"enemies\":[{\"type\":\"CrYpToG\",\"row\":1,\"col\":1,\"hp\":2},{\"type\":\"DAEMON\",\"row\":3,\"col\":3,\"hp\":3,\"lastKnownRow\":0,\"lastKnownCol\":0}]")
        XCTAssertEqual(state?.enemies.map(\.type), [.cryptog, .daemon])
        XCTAssertEqual(state?.enemies[0].lastKnown, Position(row: 1, col: 1), "a cryptog's default last known cell is its own")
    }

    func testTransmissions() {
        reject("\"transmissions\":[{\"row\":1,\"col\":1,\"turnsRemaining\":0,\"enemyType\":\"virus\"}]", path: "state.transmissions[0].turnsRemaining")
        reject("\"transmissions\":[{\"row\":1,\"col\":1,\"enemyType\":\"virus\"}]", path: "state.transmissions[0].turnsRemaining", reason: "missing")
        reject("\"transmissions\":[{\"row\":1,\"col\":1,\"turnsRemaining\":1}]", path: "state.transmissions[0].enemyType", reason: "missing")
        reject("\"transmissions\":[{\"row\":1,\"col\":1,\"turnsRemaining\":1,\"enemyType\":\"worm\"}]", path: "state.transmissions[0].enemyType")
        XCTAssertEqual(accept("\"transmissions\":[{\"row\":1,\"col\":1,\"turnsRemaining\":4,\"enemyType\":\"Glitch\"}]")?.transmissions.first?.enemyType, .glitch)
    }

    func testBlocks() throws {
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"wall\"}]", path: "state.blocks[0].type", reason: "unknown name")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"program\"}]", path: "state.blocks[0].programType", reason: "missing")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"program\",\"programType\":\"crash\",\"programActionIndex\":8}]",
               path: "state.blocks[0].programActionIndex", reason: "inconsistent")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"program\",\"programType\":\"laser\"}]", path: "state.blocks[0].programType", reason: "unknown name")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"program\",\"programActionIndex\":4}]", path: "state.blocks[0].programActionIndex")
        // Fields that do not apply are ignored but still checked.
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"data\",\"programType\":\"laser\"}]", path: "state.blocks[0].programType")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"question\",\"programType\":\"wait\"}]", path: "state.blocks[0].isData", reason: "missing")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"question\",\"isData\":true}]", path: "state.blocks[0].points", reason: "missing")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"question\",\"isData\":false}]", path: "state.blocks[0].programType", reason: "missing")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"data\",\"points\":-1}]", path: "state.blocks[0].points")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"data\",\"spawnCount\":-1}]", path: "state.blocks[0].spawnCount")
        reject("\"blocks\":[{\"row\":1,\"col\":1,\"type\":\"data\",\"isData\":\"yes\"}]", path: "state.blocks[0].isData", reason: "wrong type")

        let blocks = """
            "blocks":[{"row":1,"col":1,"type":"data"},
                      {"row":1,"col":2,"type":"program","programType":"SIPH_PLUS","points":0},
                      {"row":1,"col":3,"type":"program","programActionIndex":26,"programType":"atkplus","spawnCount":8},
                      {"row":1,"col":4,"type":"question","isData":true,"points":4},
                      {"row":1,"col":5,"type":"question","isData":false,"programType":"anti_v","siphoned":true},
                      {"row":2,"col":0,"type":"data","points":3,"programType":"wait","programActionIndex":6}]
            """
        let state = try XCTUnwrap(accept(blocks))
        let block = { (c: Int) -> Block? in state[Position(row: 1, col: c)].block }
        XCTAssertEqual(block(1), Block(kind: .data, hiddenIsData: true, points: 5, program: 0, spawnCount: 5))
        XCTAssertEqual(block(2), Block(kind: .program, hiddenIsData: false, points: 0, program: Program.siphPlus.rawValue, spawnCount: 2))
        XCTAssertEqual(block(3), Block(kind: .program, hiddenIsData: false, points: 0, program: Program.atkPlus.rawValue, spawnCount: 8))
        XCTAssertEqual(block(4), Block(kind: .question, hiddenIsData: true, points: 4, program: 0, spawnCount: 4))
        XCTAssertEqual(block(5), Block(kind: .question, hiddenIsData: false, points: 0, program: Program.antiV.rawValue, spawnCount: 2))
        XCTAssertTrue(state[Position(row: 1, col: 5)].siphoned)
        XCTAssertEqual(state[Position(row: 2, col: 0)].block?.points, 3)
    }

    func testResourcesAndFlags() throws {
        reject("\"resources\":[{\"row\":1,\"col\":1,\"credits\":1,\"energy\":1}]", path: "state.resources[0]", reason: "inconsistent")
        reject("\"resources\":[{\"row\":1,\"col\":1,\"credits\":-1}]", path: "state.resources[0].credits")
        reject("\"resources\":[{\"row\":1,\"col\":1,\"dataSiphon\":1}]", path: "state.resources[0].dataSiphon", reason: "wrong type")
        reject("\"cellFlags\":[{\"row\":1,\"col\":1,\"siphoned\":true,\"glow\":true}]", path: "state.cellFlags[0].glow", reason: "unknown key")
        let state = try XCTUnwrap(accept("""
            "resources":[{"row":0,"col":5,"dataSiphon":true,"credits":1},{"row":5,"col":5,"energy":2},{"row":1,"col":1,"credits":3}],
            "blocks":[{"row":1,"col":1,"type":"data","points":2}],
            "cellFlags":[{"row":2,"col":2,"siphoned":true,"siphonCenter":true}]
            """))
        XCTAssertEqual(state[Position(row: 0, col: 5)].content, .dataSiphon)
        XCTAssertEqual(state[Position(row: 0, col: 5)].credits, 1, "a pickup keeps its resource")
        XCTAssertEqual(state[Position(row: 5, col: 5)].energy, 2, "resources may lie on the exit")
        XCTAssertEqual(state[Position(row: 1, col: 1)].credits, 3, "resources may lie under a block")
        XCTAssertTrue(state[Position(row: 2, col: 2)].siphoned && state[Position(row: 2, col: 2)].siphonCenter)
    }

    func testExitAndOutcome() throws {
        reject("\"exit\":{\"row\":2,\"col\":2}", path: "state.exit", reason: "not a corner")
        reject("\"exit\":{\"row\":0,\"col\":6}", path: "state.exit.col")
        reject("\"exit\":{\"row\":0}", path: "state.exit.col", reason: "missing")
        reject("\"gameWon\":true,\"stage\":7", path: "state.gameWon")
        reject("\"gameWon\":true,\"stage\":8", player: "{\"row\":0,\"col\":0,\"hp\":0}", path: "state.gameWon")
        XCTAssertEqual(try XCTUnwrap(accept("\"gameWon\":true,\"stage\":8")).outcome, .won)
        XCTAssertEqual(try XCTUnwrap(accept("", player: "{\"row\":0,\"col\":0,\"hp\":0}")).outcome, .died)
        XCTAssertEqual(session.game?.actionMask(), Array(repeating: false, count: 28))
        XCTAssertEqual(try XCTUnwrap(accept("\"exit\":{\"row\":0,\"col\":5}")).exit, Position(row: 0, col: 5))
    }

    func testOccupancyRules() {
        let virus = { (r: Int, c: Int) in "{\"type\":\"virus\",\"row\":\(r),\"col\":\(c),\"hp\":1}" }
        let tx = { (r: Int, c: Int) in "{\"row\":\(r),\"col\":\(c),\"turnsRemaining\":1,\"enemyType\":\"virus\"}" }
        let data = { (r: Int, c: Int) in "{\"row\":\(r),\"col\":\(c),\"type\":\"data\"}" }
        // O1
        reject("\"blocks\":[\(data(2, 2)),\(data(2, 2))]", path: "state.blocks[1]", reason: "duplicate cell")
        reject("\"resources\":[{\"row\":1,\"col\":1,\"credits\":1},{\"row\":1,\"col\":1,\"credits\":2}]", path: "state.resources[1]", reason: "duplicate cell")
        reject("\"cellFlags\":[{\"row\":1,\"col\":1},{\"row\":1,\"col\":1,\"siphoned\":true}]", path: "state.cellFlags[1]", reason: "duplicate cell")
        // O2
        reject("\"blocks\":[\(data(5, 5))]", path: "state.blocks[0]", reason: "occupied cell")
        reject("\"blocks\":[\(data(2, 2))],\"resources\":[{\"row\":2,\"col\":2,\"dataSiphon\":true}]", path: "state.resources[0]", reason: "occupied cell")
        reject("\"resources\":[{\"row\":5,\"col\":5,\"dataSiphon\":true}]", path: "state.resources[0]", reason: "occupied cell")
        // O3..O7
        reject("\"enemies\":[\(virus(3, 3)),\(virus(1, 1)),\(virus(3, 3))]", path: "state.enemies[2]", reason: "occupied cell")
        reject("\"transmissions\":[\(tx(3, 3)),\(tx(3, 3))]", path: "state.transmissions[1]", reason: "occupied cell")
        reject("\"enemies\":[\(virus(3, 3))],\"transmissions\":[\(tx(3, 3))]", path: "state.transmissions[0]", reason: "occupied cell")
        reject("\"blocks\":[\(data(3, 3))],\"transmissions\":[\(tx(3, 3))]", path: "state.transmissions[0]", reason: "occupied cell")
        reject("\"enemies\":[\(virus(0, 0))]", path: "state.enemies[0]", reason: "occupied cell")
        reject("\"transmissions\":[\(tx(0, 0))]", path: "state.transmissions[0]", reason: "occupied cell")
        // Allowed combinations.
        accept("""
            "enemies":[{"type":"glitch","row":2,"col":2,"hp":2},\(virus(5, 5)),\(virus(0, 5))],
            "transmissions":[\(tx(5, 0)),\(tx(4, 4))],
            "blocks":[\(data(2, 2)),\(data(0, 0))],
            "resources":[{"row":0,"col":5,"dataSiphon":true},{"row":5,"col":0,"dataSiphon":true},{"row":1,"col":0,"dataSiphon":true}],
            "exit":{"row":5,"col":5}
            """, player: "{\"row\":0,\"col\":0,\"dataSiphons\":1}")
        accept("\"resources\":[{\"row\":1,\"col\":0,\"dataSiphon\":true}]", player: "{\"row\":1,\"col\":0}")
        accept("", player: "{\"row\":5,\"col\":5}")
    }

    func testSnapshots() throws {
        let snap = { (body: String) in "{\"player\":{\"row\":0,\"col\":1}\(body.isEmpty ? "" : ",")\(body)}" }
        let five = Array(repeating: snap(""), count: 5).joined(separator: ",")
        reject("\"undoHistory\":[\(five)]", path: "state.undoHistory", reason: "too many snapshots")
        reject("\"undoHistory\":[\(snap("\"exit\":{\"row\":0,\"col\":5}"))]", path: "state.undoHistory[0].exit", reason: "inconsistent")
        reject("\"undoHistory\":[\(snap("\"stage\":2"))]", path: "state.undoHistory[0].stage", reason: "unknown key")
        reject("\"undoHistory\":[{}]", path: "state.undoHistory[0].player", reason: "missing")
        reject("\"undoHistory\":[\(snap("\"enemies\":[{\"type\":\"virus\",\"row\":3,\"col\":3,\"hp\":1,\"spawnedFromSiphon\":true}]"))]",
               path: "state.undoHistory[0].enemies[0].spawnedFromSiphon", reason: "not allowed in a snapshot")
        reject("\"undoHistory\":[\(snap("\"enemies\":[{\"type\":\"virus\",\"row\":3,\"col\":3,\"hp\":1,\"stunned\":true}]"))]",
               path: "state.undoHistory[0].enemies[0].stunned")
        reject("\"undoHistory\":[\(snap("\"enemies\":[{\"type\":\"virus\",\"row\":3,\"col\":3,\"hp\":1,\"disabledTurns\":1}]"))]",
               path: "state.undoHistory[0].enemies[0].disabledTurns")
        reject("\"undoHistory\":[\(snap("\"transmissions\":[{\"row\":3,\"col\":3,\"turnsRemaining\":1,\"enemyType\":\"virus\",\"isFromScheduledTask\":true}]"))]",
               path: "state.undoHistory[0].transmissions[0].isFromScheduledTask")
        reject("\"undoHistory\":[\(snap("\"enemies\":[{\"type\":\"virus\",\"row\":0,\"col\":1,\"hp\":1}]"))]",
               path: "state.undoHistory[0].enemies[0]", reason: "occupied cell")
        reject("\"undoHistory\":[\(snap("")),\(snap("\"blocks\":[{\"row\":5,\"col\":5,\"type\":\"data\"}]"))]",
               path: "state.undoHistory[1].blocks[0]", reason: "occupied cell")

        let state = try XCTUnwrap(accept("""
            "exit":{"row":0,"col":5},"ownedPrograms":[14],"player":{"row":0,"col":0,"credits":1},
            "undoHistory":[{"player":{"row":2,"col":2,"hp":0},"turn":3,"ownedPrograms":[5],"exit":{"row":0,"col":5},
                            "blocks":[{"row":4,"col":4,"type":"data","points":2,"siphoned":true}],"showActivated":true,
                            "enemies":[{"type":"cryptog","row":3,"col":3,"hp":2,"lastKnownRow":1,"lastKnownCol":1}]}]
            """, player: "{\"row\":0,\"col\":0,\"credits\":1}"))
        let snapshot = try XCTUnwrap(state.history.first)
        XCTAssertEqual(snapshot.player.hp, 0, "a snapshot may hold a dead player")
        XCTAssertEqual(snapshot.turn, 3)
        XCTAssertEqual(snapshot.owned.sorted, [0])
        XCTAssertTrue(snapshot.showActivated)
        XCTAssertEqual(snapshot.cells[Position(row: 0, col: 5).index].content, .exit)
        XCTAssertTrue(snapshot.cells[Position(row: 4, col: 4).index].siphoned)
        XCTAssertEqual(snapshot.enemies.first?.lastKnown, Position(row: 1, col: 1))
        XCTAssertTrue(state.actionMask()[14], "UNDO is allowed with a history")
    }

    func testRunningStateWithoutLegalActionIsRejected() {
        let walls = "\"blocks\":[{\"row\":1,\"col\":0,\"type\":\"data\"},{\"row\":0,\"col\":1,\"type\":\"data\"}]"
        reject(walls, path: "state", reason: "no legal action")
        accept(walls, player: "{\"row\":0,\"col\":0,\"dataSiphons\":1}")
        accept(walls, player: "{\"row\":0,\"col\":0,\"hp\":0}")
    }
}
