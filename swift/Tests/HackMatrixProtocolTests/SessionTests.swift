// Each command of protocol.md §5 and each error code of §7.
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol
import HackMatrixTestSupport

final class SessionTests: XCTestCase {
    func testHelloAndVersion() {
        var session = Session()
        for command in ["hello", "version"] {
            let r = send(&session, "{\"action\":\"\(command)\"}")
            XCTAssertEqual(r["protocol"]?.string, "hackmatrix-cli")
            XCTAssertEqual(r["protocolVersion"]?.string, "2.1")
            XCTAssertEqual(r["engine"]?.string, "hackmatrix-swift")
            XCTAssertEqual(r["engineVersion"]?.string, "0.1.0")
            XCTAssertEqual(r["actionCount"]?.int, 28)
            XCTAssertEqual(r["observationShapes"]?["grid"], .array([.number(6), .number(6), .number(42)]))
            XCTAssertEqual(r["observationShapes"]?["flat"]?[0]?.int, 1545)
            XCTAssertEqual(r["rewardComponents"]?.array?.compactMap(\.string), RewardComponents.names)
            XCTAssertEqual(r["traceFormat"]?["version"]?.int, 1)
            XCTAssertEqual(r["commands"]?.array?.count, 10)
        }
    }

    func testSpaces() {
        var session = Session()
        XCTAssertEqual(send(&session, "{\"action\":\"getActionSpace\"}")["actionSpaceSize"]?.int, 28)
        let space = send(&session, "{\"action\":\"getObservationSpace\"}")
        XCTAssertEqual(space["gridSize"]?.int, 6)
        XCTAssertEqual(space["playerFeatures"]?.int, 10)
        XCTAssertEqual(space["programFeatures"]?.int, 23)
        XCTAssertEqual(space["cellFeatures"]?.int, 42)
        XCTAssertEqual(space["flatSize"]?.int, 1545)
    }

    func testNoGameAnswers() {
        var session = Session()
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":0}", "no_game")
        assertError(&session, "{\"action\":\"getState\"}", "no_game")
        XCTAssertEqual(send(&session, "{\"action\":\"getValidActions\"}")["validActions"], .array([]))
        let hidden = send(&session, "{\"action\":\"getInternalState\"}")
        XCTAssertEqual(
            hidden.objectKeys,
            ["scheduledTaskInterval", "nextScheduledTaskTurn", "pendingSiphonTransmissions", "turnCount", "enemies"])
        XCTAssertEqual(hidden["turnCount"]?.int, 0)
        XCTAssertEqual(hidden["enemies"], .array([]))
    }

    func testResetWithSeed() {
        var session = Session()
        let r = send(&session, "{\"action\":\"reset\",\"seed\":12345}")
        XCTAssertEqual(r["seed"]?.int, 12345)
        XCTAssertEqual(r["info"]?["step_index"]?.int, 0)
        let mask = r["info"]?["action_mask"]?.array?.compactMap(\.bool)
        XCTAssertEqual(mask, GameState.newGame(seed: 12345).actionMask())
        XCTAssertEqual(session.game, GameState.newGame(seed: 12345))
        XCTAssertEqual(r["observation"]?["stage"]?.int, 1)
        XCTAssertEqual(r["observation"]?["cells"]?.array?.count, 6)
        // Integral spellings of the seed and null (= absent) are accepted.
        XCTAssertEqual(send(&session, "{\"action\":\"reset\",\"seed\":7.0}")["seed"]?.int, 7)
        XCTAssertEqual(send(&session, "{\"action\":\"reset\",\"seed\":4294967295}")["seed"]?.int, 4_294_967_295)
    }

    func testResetWithoutSeedUsesTheSeedSource() {
        var session = Session(seedSource: { 4242 })
        XCTAssertEqual(send(&session, "{\"action\":\"reset\"}")["seed"]?.int, 4242)
        XCTAssertEqual(send(&session, "{\"action\":\"reset\",\"seed\":null}")["seed"]?.int, 4242)
        XCTAssertEqual(session.game?.seed, 4242)
    }

    func testResetRejectsBadSeeds() {
        var session = Session()
        for seed in ["-1", "4294967296", "1.5", "\"7\"", "true", "[]", "1e400"] {
            assertError(&session, "{\"action\":\"reset\",\"seed\":\(seed)}", "invalid_request")
        }
        XCTAssertNil(session.game)
    }

    func testEnvelopeErrors() {
        var session = Session()
        send(&session, "{\"action\":\"reset\",\"seed\":1}")
        assertError(&session, "", "parse_error")
        assertError(&session, "  \t ", "parse_error")
        assertError(&session, "{\"action\":", "parse_error")
        assertError(&session, "this is not json", "parse_error")
        assertError(&session, "[1,2]", "invalid_request")
        assertError(&session, "\"reset\"", "invalid_request")
        assertError(&session, "{}", "invalid_request")
        assertError(&session, "{\"action\":null}", "invalid_request")
        assertError(&session, "{\"action\":3}", "invalid_request")
        assertError(&session, "{\"action\":\"dance\"}", "unknown_command")
        assertError(&session, "{\"action\":\"Reset\"}", "unknown_command")
        // Unknown top-level keys are ignored.
        XCTAssertNil(send(&session, "{\"action\":\"getActionSpace\",\"extra\":[1,{}]}")["error"])
    }

    func testParseErrorNamesTheLine() {
        var session = Session()
        send(&session, "{\"action\":\"hello\"}")
        let r = send(&session, "nope")
        XCTAssertEqual(errorCode(r), "parse_error")
        XCTAssertTrue(r["error"]?["message"]?.string?.contains("line 2") ?? false)
    }

    func testStepChecksInDocumentedOrder() {
        var session = Session()
        // 1. actionIndex missing or not an integer comes before no_game.
        assertError(&session, "{\"action\":\"step\"}", "invalid_request")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":1.5}", "invalid_request")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":\"1\"}", "invalid_request")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":true}", "invalid_request")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":null}", "invalid_request")
        // 2. no game.
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":99}", "no_game")
        // 4. range, 5. mask. Player at (0,0): down and left leave the board.
        session = sessionWith("{\"player\":{\"row\":0,\"col\":0}}")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":28}", "action_out_of_range")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":-1}", "action_out_of_range")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":1e300}", "action_out_of_range")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":1}", "action_masked")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":7}", "action_masked")
        let masked = send(&session, "{\"action\":\"step\",\"actionIndex\":2}")
        XCTAssertEqual(masked["error"]?["details"]?["actionIndex"]?.int, 2)
        let outOfRange = send(&session, "{\"action\":\"step\",\"actionIndex\":99}")
        XCTAssertEqual(outOfRange["error"]?["details"]?["actionIndex"]?.int, 99)
        // 3.0 is the integer 3.
        XCTAssertNil(send(&session, "{\"action\":\"step\",\"actionIndex\":3.0}")["error"])
    }

    func testStepResponse() throws {
        var session = Session()
        send(&session, "{\"action\":\"reset\",\"seed\":5}")
        let action = try XCTUnwrap(session.game?.actionMask().firstIndex(of: true))
        var expected = try XCTUnwrap(session.game)
        let result = try expected.step(action)
        let r = send(&session, "{\"action\":\"step\",\"actionIndex\":\(action)}")
        XCTAssertEqual(session.game, expected)
        XCTAssertEqual(r["reward"]?.double, result.reward)
        XCTAssertEqual(r["done"]?.bool, result.done)
        let info = try XCTUnwrap(r["info"])
        XCTAssertEqual(info["step_index"]?.int, 1)
        let components = try XCTUnwrap(info["reward_components"])
        XCTAssertEqual(components.objectKeys, Set(RewardComponents.names))
        for (k, name) in RewardComponents.names.enumerated() {
            XCTAssertEqual(components[name]?.double, result.components.values[k], name)
        }
        let breakdown = try XCTUnwrap(info["reward_breakdown"])
        XCTAssertEqual(breakdown.objectKeys, Set(RewardComponents.legacyNames))
        for (k, name) in RewardComponents.legacyNames.enumerated() {
            XCTAssertEqual(breakdown[name]?.double, result.components.values[k + 1], name)
        }
        let mask = info["action_mask"]?.array?.compactMap(\.bool)
        XCTAssertEqual(mask, expected.actionMask())
        let valid = send(&session, "{\"action\":\"getValidActions\"}")["validActions"]?.array?.compactMap(\.int)
        XCTAssertEqual(valid, mask.map { m in m.indices.filter { m[$0] } })
        XCTAssertNil(info["invalid_action"])
    }

    func testEpisodeEndsAndStaysOver() throws {
        var session = Session()
        send(&session, "{\"action\":\"reset\",\"seed\":3}")
        let last = try XCTUnwrap(playUntilDone(&session, seed: 11))
        let info = try XCTUnwrap(last["info"])
        XCTAssertTrue(info["death"]?.bool == true || info["game_won"]?.bool == true)
        XCTAssertEqual(info["action_mask"]?.array?.compactMap(\.bool), Array(repeating: false, count: 28))
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":0}", "episode_over")
        // episode_over comes before the range check.
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":99}", "episode_over")
        XCTAssertEqual(send(&session, "{\"action\":\"getValidActions\"}")["validActions"], .array([]))
        XCTAssertEqual(send(&session, "{\"action\":\"getInternalState\"}")["gameOver"]?.bool, true)
        // A finished game loads back, over, with an all-false mask.
        let state = try XCTUnwrap(send(&session, "{\"action\":\"getState\"}")["state"])
        var other = Session()
        var writer = JSONWriter()
        writer.value(state)
        let loaded = send(&other, setStateLine(writer.string))
        XCTAssertEqual(loaded["info"]?["action_mask"]?.array?.compactMap(\.bool), Array(repeating: false, count: 28))
        XCTAssertEqual(other.handle(line: "{\"action\":\"getState\"}"), session.handle(line: "{\"action\":\"getState\"}"))
        assertError(&other, "{\"action\":\"step\",\"actionIndex\":0}", "episode_over")
    }

    func testWinningStep() throws {
        var session = sessionWith("{\"player\":{\"row\":5,\"col\":4},\"stage\":8,\"exit\":{\"row\":5,\"col\":5}}")
        let r = send(&session, "{\"action\":\"step\",\"actionIndex\":3}")
        XCTAssertEqual(r["done"]?.bool, true)
        XCTAssertEqual(r["info"]?["game_won"]?.bool, true)
        XCTAssertEqual(r["info"]?["stage_complete"]?.bool, true)
        XCTAssertNil(r["info"]?["death"])
        XCTAssertEqual(r["observation"]?["stage"]?.int, 8)
        XCTAssertEqual(r["info"]?["reward_components"]?["stage_completion"]?.double, 100)
        let state = send(&session, "{\"action\":\"getState\"}")["state"]
        XCTAssertEqual(state?["gameWon"]?.bool, true)
        XCTAssertEqual(state?["stepIndex"]?.int, 1)
    }

    func testOrdinaryStepHasNoEventFlags() {
        var session = sessionWith("{\"player\":{\"row\":0,\"col\":0}}")
        let info = send(&session, "{\"action\":\"step\",\"actionIndex\":0}")["info"]
        XCTAssertNil(info?["stage_complete"])
        XCTAssertNil(info?["death"])
        XCTAssertNil(info?["game_won"])
        XCTAssertEqual(info?["reward_components"]?["step_penalty"]?.double, -0.01)
    }

    func testInternalState() throws {
        var session = sessionWith(
            """
            {"player":{"row":0,"col":0},"enemies":[{"type":"daemon","row":1,"col":4,"hp":3,"spawnedFromSiphon":true}],
             "scheduledTaskInterval":11,"nextScheduledTaskTurn":17,"pendingSiphonTransmissions":2,"turn":5,
             "stepIndex":31,"seed":12345,"atkPlusUsesThisStage":1,"exit":{"row":5,"col":0}}
            """)
        let r = send(&session, "{\"action\":\"getInternalState\"}")
        XCTAssertEqual(r["scheduledTaskInterval"]?.int, 11)
        XCTAssertEqual(r["nextScheduledTaskTurn"]?.int, 17)
        XCTAssertEqual(r["pendingSiphonTransmissions"]?.int, 2)
        XCTAssertEqual(r["turnCount"]?.int, 5)
        XCTAssertEqual(r["stepIndex"]?.int, 31)
        XCTAssertEqual(r["seed"]?.int, 12345)
        XCTAssertEqual(r["stepActive"]?.bool, false)
        XCTAssertEqual(r["atkPlusUsesThisStage"]?.int, 1)
        XCTAssertEqual(r["exit"]?["col"]?.int, 0)
        XCTAssertEqual(r["undoDepth"]?.int, 0)
        XCTAssertEqual(r["gameOver"]?.bool, false)
        let enemy = try XCTUnwrap(r["enemies"]?[0])
        XCTAssertEqual(enemy["type"]?.string, "daemon")
        XCTAssertEqual(enemy["spawnedFromSiphon"]?.bool, true)
        XCTAssertEqual(enemy["disabledTurns"]?.int, 0)
    }

    func testErrorLeavesGameUntouched() {
        var session = Session()
        send(&session, "{\"action\":\"reset\",\"seed\":9}")
        let before = session.handle(line: "{\"action\":\"getState\"}")
        assertError(&session, "{\"action\":\"setState\",\"state\":{\"player\":{\"row\":0,\"col\":0},\"stage\":9}}", "invalid_state")
        assertError(&session, "{\"action\":\"setState\",\"state\":5}", "invalid_request")
        assertError(&session, "{\"action\":\"setState\"}", "invalid_request")
        assertError(&session, "{\"action\":\"setState\",\"state\":null}", "invalid_request")
        XCTAssertEqual(session.handle(line: "{\"action\":\"getState\"}"), before)
    }
}
