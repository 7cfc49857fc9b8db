// Helpers for the protocol tests: send a request line, read the response back
// as a JSONValue, and reach into it.
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol

extension JSONValue {
    subscript(_ key: String) -> JSONValue? {
        guard case .object(let o) = self else { return nil }
        return o[key]
    }

    subscript(_ index: Int) -> JSONValue? {
        guard case .array(let a) = self, index < a.count else { return nil }
        return a[index]
    }

    var int: Int? { integerValue }
    var double: Double? { if case .number(let d) = self { return d } else { return nil } }
    var string: String? { if case .string(let s) = self { return s } else { return nil } }
    var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    var array: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    var objectKeys: Set<String> { if case .object(let o) = self { return Set(o.keys) } else { return [] } }
}

/// Sends one line and parses the single response line, failing on invalid JSON.
@discardableResult
func send(_ session: inout Session, _ line: String, file: StaticString = #filePath, line number: UInt = #line) -> JSONValue {
    let response = session.handle(line: line)
    XCTAssertFalse(response.contains("\n"), "response spans lines", file: file, line: number)
    do {
        return try JSONParser.parse(response)
    } catch {
        XCTFail("response is not JSON: \(response)", file: file, line: number)
        return .null
    }
}

func errorCode(_ response: JSONValue) -> String? { response["error"]?["code"]?.string }

func assertError(
    _ session: inout Session, _ line: String, _ code: String, path: String? = nil,
    file: StaticString = #filePath, line number: UInt = #line
) {
    let before = session.game
    let response = send(&session, line, file: file, line: number)
    XCTAssertEqual(errorCode(response), code, "\(line) -> \(response)", file: file, line: number)
    XCTAssertNotNil(response["error"]?["message"]?.string, file: file, line: number)
    if let path {
        XCTAssertEqual(response["error"]?["details"]?["path"]?.string, path, "\(response)", file: file, line: number)
    }
    XCTAssertEqual(session.game, before, "an error changed the game", file: file, line: number)
}

/// A `setState` request line around a state object written as JSON text.
func setStateLine(_ state: String) -> String { "{\"action\":\"setState\",\"state\":\(state)}" }

/// A session holding the game of the given state (which must be accepted).
func sessionWith(_ state: String, file: StaticString = #filePath, line: UInt = #line) -> Session {
    var session = Session(seedSource: { 99 })
    let response = send(&session, setStateLine(state), file: file, line: line)
    XCTAssertNil(response["error"], "\(response)", file: file, line: line)
    return session
}

/// Plays random valid actions (own generator, fixed seed) until the episode ends.
func playUntilDone(_ session: inout Session, seed: UInt64, maxSteps: Int = 5000) -> JSONValue? {
    var rng = seed
    for _ in 0..<maxSteps {
        guard let mask = session.game?.actionMask() else { return nil }
        let allowed = mask.indices.filter { mask[$0] }
        rng = rng &* 6364136223846793005 &+ 1442695040888963407
        let action = allowed[Int((rng >> 33) % UInt64(allowed.count))]
        let response = send(&session, "{\"action\":\"step\",\"actionIndex\":\(action)}")
        if response["done"]?.bool == true { return response }
    }
    return nil
}
