// The worked examples of protocol.md §6.7 and §10 and the visibility rules of
// observation.md §5.2 / §11 as seen in the JSON observation.
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol
import HackMatrixTestSupport

final class ExampleTests: XCTestCase {
    let protocolExample = """
        {"action": "setState", "state": {
          "player": {"row": 2, "col": 2, "hp": 2, "credits": 4, "energy": 3, "dataSiphons": 1},
          "enemies": [{"type": "cryptog", "row": 4, "col": 4, "hp": 1},
                      {"type": "virus", "row": 0, "col": 2, "hp": 2, "stunned": true, "spawnedFromSiphon": true}],
          "transmissions": [{"row": 3, "col": 0, "turnsRemaining": 2, "enemyType": "glitch"}],
          "blocks": [{"row": 2, "col": 3, "type": "data", "points": 3},
                     {"row": 1, "col": 1, "type": "program", "programType": "crash", "spawnCount": 6},
                     {"row": 4, "col": 1, "type": "question", "isData": false, "programActionIndex": 26}],
          "resources": [{"row": 0, "col": 5, "dataSiphon": true, "credits": 1},
                        {"row": 1, "col": 2, "energy": 2}],
          "ownedPrograms": [10, 18],
          "stage": 3, "turn": 4,
          "exit": {"row": 5, "col": 0},
          "seed": 7, "stepIndex": 12}}
        """

    func testProtocolStateExample() throws {
        var session = Session()
        let r = send(&session, protocolExample.replacingOccurrences(of: "\n", with: " "))
        XCTAssertNil(r["error"], "\(r)")
        XCTAssertEqual(r["info"]?["step_index"]?.int, 12)
        let game = try XCTUnwrap(session.game)
        XCTAssertEqual(game.enemies[0].lastKnown, Position(row: 4, col: 4))
        XCTAssertEqual(game[Position(row: 2, col: 3)].block?.spawnCount, 3)
        XCTAssertEqual(game[Position(row: 4, col: 1)].block?.spawnCount, 2)
        XCTAssertEqual(game[Position(row: 4, col: 1)].block?.program, Program.atkPlus.rawValue)
        XCTAssertEqual(game[Position(row: 1, col: 1)].block?.spawnCount, 6)
        XCTAssertEqual(game[Position(row: 0, col: 5)].content, .dataSiphon)
        XCTAssertEqual(game[Position(row: 0, col: 5)].credits, 1)
        XCTAssertEqual(game[Position(row: 5, col: 0)].content, .exit)
        XCTAssertEqual(game.owned.sorted, [5, 13])
        XCTAssertEqual(game.interval, 12)
        XCTAssertEqual(game.nextTaskTurn, 12)

        let obs = try XCTUnwrap(r["observation"])
        XCTAssertEqual(obs["playerHP"]?.int, 2)
        XCTAssertEqual(obs["stage"]?.int, 3)
        XCTAssertEqual(obs["turn"]?.int, 4)
        XCTAssertEqual(obs["ownedPrograms"], .array([.number(10), .number(18)]))
        let cell = { (r: Int, c: Int) -> JSONValue? in obs["cells"]?[r]?[c] }
        // The cryptog at (4,4) is not aligned with (2,2) and SHOW is off: hidden, with a hint.
        XCTAssertNil(cell(4, 4)?["enemy"])
        XCTAssertEqual(obs["cryptogHints"], .array([.object(JSONObject(keys: ["row", "col"], values: [.number(4), .number(4)]))]))
        XCTAssertEqual(cell(0, 2)?["enemy"]?["type"]?.string, "virus")
        XCTAssertEqual(cell(0, 2)?["enemy"]?["isStunned"]?.bool, true)
        XCTAssertEqual(cell(0, 2)?["enemy"]?["spawnedFromSiphon"]?.bool, true)
        XCTAssertEqual(cell(3, 0)?["transmission"], .object(JSONObject(keys: ["turnsUntilSpawn"], values: [.number(2)])))
        XCTAssertEqual(cell(4, 1)?["block"]?.objectKeys, ["blockType", "isSiphoned"], "a question block hides its contents")
        XCTAssertEqual(cell(1, 1)?["block"]?["programType"]?.string, "crash")
        XCTAssertEqual(cell(1, 1)?["block"]?["programActionIndex"]?.int, 7)
        XCTAssertEqual(cell(1, 1)?["block"]?["points"]?.int, 0)
        XCTAssertEqual(cell(1, 1)?["block"]?["transmissionSpawnCount"]?.int, 6)
        XCTAssertEqual(cell(2, 3)?["block"]?["points"]?.int, 3)
        XCTAssertEqual(cell(0, 5)?["isDataSiphon"]?.bool, true)
        XCTAssertEqual(cell(0, 5)?["credits"]?.int, 1)
        XCTAssertEqual(cell(1, 2)?["energy"]?.int, 2)
        XCTAssertEqual(cell(5, 0)?["isExit"]?.bool, true)
        XCTAssertEqual(cell(3, 5)?.objectKeys, ["row", "col", "isDataSiphon", "isExit", "siphonCenter"])
    }

    func testShowRevealsCryptogsAndTransmissionTypes() throws {
        let state = """
            {"player":{"row":2,"col":2},"showActivated":true,
             "enemies":[{"type":"cryptog","row":4,"col":4,"hp":1,"lastKnownRow":4,"lastKnownCol":3}],
             "transmissions":[{"row":3,"col":0,"turnsRemaining":4,"enemyType":"glitch"}]}
            """
        var session = Session()
        let obs = try XCTUnwrap(send(&session, setStateLine(state))["observation"])
        XCTAssertEqual(obs["cells"]?[4]?[4]?["enemy"]?["type"]?.string, "cryptog")
        XCTAssertEqual(obs["cells"]?[3]?[0]?["transmission"]?["enemyType"]?.string, "glitch")
        XCTAssertEqual(obs["cryptogHints"], .array([]))
        // Without SHOW the hint is the last known cell, not the current one.
        let hidden = try XCTUnwrap(send(&session, setStateLine(state.replacingOccurrences(of: "true", with: "false")))["observation"])
        XCTAssertEqual(hidden["cryptogHints"]?[0]?["col"]?.int, 3)
        XCTAssertNil(hidden["cells"]?[3]?[0]?["transmission"]?["enemyType"])
    }

    func testResourcesUnderBlocks() throws {
        let state = """
            {"player":{"row":1,"col":1},
             "blocks":[{"row":1,"col":2,"type":"data","points":7,"spawnCount":0,"siphoned":true},
                       {"row":3,"col":4,"type":"question","isData":true,"points":5}],
             "resources":[{"row":1,"col":2,"credits":2},{"row":3,"col":4,"energy":1}]}
            """
        var session = Session()
        let obs = try XCTUnwrap(send(&session, setStateLine(state))["observation"])
        XCTAssertEqual(obs["cells"]?[1]?[2]?["credits"]?.int, 2, "visible under a siphoned block")
        XCTAssertNil(obs["cells"]?[3]?[4]?["energy"], "hidden under an unsiphoned block")
    }

    func testExampleSession() throws {
        var session = Session()
        XCTAssertEqual(send(&session, "{\"action\": \"hello\"}")["protocol"]?.string, "hackmatrix-cli")
        let noGame = send(&session, "{\"action\": \"step\", \"actionIndex\": 0}")
        XCTAssertEqual(noGame["error"]?["code"]?.string, "no_game")
        XCTAssertEqual(noGame["error"]?["message"]?.string, "no game: send reset or setState first")
        let reset = send(&session, "{\"action\": \"reset\", \"seed\": 42}")
        XCTAssertEqual(reset["seed"]?.int, 42)
        XCTAssertEqual(reset["info"]?["step_index"]?.int, 0)
        let outOfRange = send(&session, "{\"action\": \"step\", \"actionIndex\": 99}")
        XCTAssertEqual(outOfRange["error"]?["code"]?.string, "action_out_of_range")
        XCTAssertEqual(outOfRange["error"]?["message"]?.string, "actionIndex 99 is outside 0..27")
        XCTAssertEqual(outOfRange["error"]?["details"]?["actionIndex"]?.int, 99)
        let mask = try XCTUnwrap(reset["info"]?["action_mask"]?.array?.compactMap(\.bool))
        let first = try XCTUnwrap(mask.firstIndex(of: true))
        let step = send(&session, "{\"action\": \"step\", \"actionIndex\": \(first)}")
        XCTAssertEqual(step["info"]?["step_index"]?.int, 1)
        XCTAssertNotNil(step["reward"]?.double)
        XCTAssertEqual(errorCode(send(&session, "this is not json")), "parse_error")
        let bad = send(&session, "{\"action\": \"setState\", \"state\": {\"player\": {\"row\": 9, \"col\": 0}}}")
        XCTAssertEqual(bad["error"]?["code"]?.string, "invalid_state")
        XCTAssertEqual(bad["error"]?["message"]?.string, "state.player.row must be in 0..5")
        XCTAssertEqual(bad["error"]?["details"]?["path"]?.string, "state.player.row")
        XCTAssertEqual(bad["error"]?["details"]?["reason"]?.string, "out of range")
        let state = try XCTUnwrap(send(&session, "{\"action\": \"getState\"}")["state"])
        XCTAssertEqual(state["seed"]?.int, 42)
        XCTAssertEqual(state["stepIndex"]?.int, 1)
    }
}
