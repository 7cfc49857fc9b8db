// Helpers for the protocol tests: send a request line, read the response back
// as a JSONValue, reach into it, and play an episode with the random policy.
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol

extension JSONValue {
    public subscript(_ key: String) -> JSONValue? {
        guard case .object(let o) = self else { return nil }
        return o[key]
    }

    public subscript(_ index: Int) -> JSONValue? {
        guard case .array(let a) = self, index < a.count else { return nil }
        return a[index]
    }

    public var int: Int? { integerValue }
    public var double: Double? { if case .number(let d) = self { return d } else { return nil } }
    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var bool: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var array: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectKeys: Set<String> { if case .object(let o) = self { return Set(o.keys) } else { return [] } }
}

/// Sends one line and parses the single response line, failing on invalid JSON.
@discardableResult
public func send(_ session: inout Session, _ line: String, file: StaticString = #filePath, line number: UInt = #line)
    -> JSONValue
{
    let response = session.handle(line: line)
    XCTAssertFalse(response.contains("\n"), "response spans lines", file: file, line: number)
    do {
        return try JSONParser.parse(response)
    } catch {
        XCTFail("response is not JSON: \(response)", file: file, line: number)
        return .null
    }
}

public func errorCode(_ response: JSONValue) -> String? { response["error"]?["code"]?.string }

public func assertError(
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
public func setStateLine(_ state: String) -> String { "{\"action\":\"setState\",\"state\":\(state)}" }

/// A session holding the game of the given state (which must be accepted).
public func sessionWith(_ state: String, file: StaticString = #filePath, line: UInt = #line) -> Session {
    var session = Session(seedSource: { 99 })
    let response = send(&session, setStateLine(state), file: file, line: line)
    XCTAssertNil(response["error"], "\(response)", file: file, line: line)
    return session
}

/// Plays random valid actions (the shared `RandomPolicy`) until the episode ends.
public func playUntilDone(_ session: inout Session, seed: UInt64, maxSteps: Int = 5000) -> JSONValue? {
    var policy = RandomPolicy(seed: seed)
    for _ in 0..<maxSteps {
        guard let mask = session.game?.actionMask(), let action = policy.pick(mask) else { return nil }
        let response = send(&session, "{\"action\":\"step\",\"actionIndex\":\(action)}")
        if response["done"]?.bool == true { return response }
    }
    return nil
}
