// getState / setState round trips (protocol.md §5.6): the loaded game is
// indistinguishable from the one read, and getState repeats itself.
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol
import HackMatrixTestSupport

final class RoundTripTests: XCTestCase {
    let getState = "{\"action\":\"getState\"}"

    /// A pseudo-random valid action for step `k` of the played session.
    func action(_ session: Session, _ k: Int) -> Int {
        let mask = session.game?.actionMask() ?? []
        let allowed = mask.indices.filter { mask[$0] }
        return allowed[(k &* 2_654_435_761) % allowed.count]
    }

    func testRoundTripsAlongRandomEpisodes() throws {
        for seed in [1, 42, 1234] {
            var played = Session()
            send(&played, "{\"action\":\"reset\",\"seed\":\(seed)}")
            for k in 0..<400 {
                guard played.game?.outcome == .running else { break }
                let text = played.handle(line: getState)
                var loaded = Session()
                let loadResponse = send(&loaded, "{\"action\":\"setState\",\"state\":\(try XCTUnwrap(stateText(text)))}")
                XCTAssertNil(loadResponse["error"], "seed \(seed) step \(k): \(loadResponse)")
                XCTAssertEqual(loaded.handle(line: getState), text, "getState must repeat itself (seed \(seed), step \(k))")
                // Every future request answers the same: compare the next few steps.
                if k % 25 == 0 {
                    for j in 0..<10 {
                        guard played.game?.outcome == .running else { break }
                        let a = action(played, k + j)
                        let line = "{\"action\":\"step\",\"actionIndex\":\(a)}"
                        XCTAssertEqual(loaded.handle(line: line), played.handle(line: line), "seed \(seed) step \(k)+\(j)")
                    }
                } else {
                    send(&played, "{\"action\":\"step\",\"actionIndex\":\(action(played, k))}")
                }
            }
        }
    }

    /// The `state` member of a getState response, as text.
    func stateText(_ response: String) -> String? {
        guard let value = try? JSONParser.parse(response), let state = value["state"] else { return nil }
        var out = JSONWriter()
        out.value(state)
        return out.string
    }

    func testCanonicalFormOfAHandWrittenState() throws {
        var session = sessionWith(
            """
            {"player":{"row":0,"col":0},"ownedPrograms":[20,5],
             "blocks":[{"row":3,"col":3,"type":"program","programType":"WARP","points":9,"siphoned":true},
                       {"row":1,"col":1,"type":"question","isData":false,"programActionIndex":9}],
             "resources":[{"row":2,"col":2},{"row":4,"col":4,"credits":0,"energy":0,"dataSiphon":true}],
             "enemies":[{"type":"virus","row":5,"col":1,"hp":2,"lastKnownRow":0,"lastKnownCol":0}]}
            """)
        let state = try XCTUnwrap(send(&session, getState)["state"])
        XCTAssertEqual(state["ownedPrograms"], .array([.number(5), .number(20)]))
        let program = try XCTUnwrap(state["blocks"]?[1])  // sorted by cell: (1,1) first, then (3,3)
        XCTAssertEqual(program.objectKeys, ["row", "col", "type", "siphoned", "spawnCount", "programType", "programActionIndex"])
        XCTAssertEqual(program["programType"]?.string, "warp")
        XCTAssertEqual(program["siphoned"]?.bool, true)
        let question = try XCTUnwrap(state["blocks"]?[0])
        XCTAssertEqual(question.objectKeys, ["row", "col", "type", "siphoned", "spawnCount", "isData", "programType", "programActionIndex"])
        XCTAssertEqual(question["programType"]?.string, "poly")
        // A siphoned block cell is marked in both places; empty resources are dropped.
        XCTAssertEqual(state["cellFlags"], .array([.object(JSONObject(
            keys: ["row", "col", "siphoned", "siphonCenter"], values: [.number(3), .number(3), .bool(true), .bool(false)]))]))
        XCTAssertEqual(state["resources"]?.array?.count, 1)
        XCTAssertEqual(state["enemies"]?[0]?["lastKnownRow"], .null, "non-cryptogs have no last known position")
        XCTAssertEqual(
            state.objectKeys,
            StateDecoder.stateKeys, "every key is present in canonical form")
        XCTAssertEqual(state["player"]?.objectKeys, StateDecoder.playerKeys)
        XCTAssertEqual(state["enemies"]?[0]?.objectKeys, StateDecoder.enemyKeys)
    }

    func testSnapshotsAreCanonicalToo() throws {
        var session = Session()
        send(&session, "{\"action\":\"reset\",\"seed\":8}")
        for k in 0..<6 where session.game?.outcome == .running {
            send(&session, "{\"action\":\"step\",\"actionIndex\":\(action(session, k))}")
        }
        let state = try XCTUnwrap(send(&session, getState)["state"])
        for snapshot in state["undoHistory"]?.array ?? [] {
            XCTAssertEqual(snapshot.objectKeys, StateDecoder.boardKeys)
        }
    }
}
