// Byte-level mutations of valid requests (deterministic generator): every
// line gets one JSON object back, errors change nothing, and any mutated
// state that is accepted round-trips and can be played.
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol
import HackMatrixTestSupport

final class FuzzTests: XCTestCase {
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static let alphabet = Array("{}[]:,\" 0123456789-+.eE truefalsnl\\/".utf8) + [0xFF, 0xC3, 0x00, 0x0A]

    /// Either a syntax-level mutation, or (half the time) a change of a few
    /// digits or booleans, which keeps the JSON valid and exercises validation.
    func mutate(_ line: [UInt8], _ rng: inout Generator) -> [UInt8] {
        if rng.next(2) == 0 { return mutateValues(line, &rng) }
        var bytes = line
        for _ in 0..<(1 + rng.next(4)) {
            guard !bytes.isEmpty else { break }
            let at = rng.next(bytes.count)
            switch rng.next(4) {
            case 0: bytes[at] = Self.alphabet[rng.next(Self.alphabet.count)]
            case 1: bytes.remove(at: at)
            case 2: bytes.insert(Self.alphabet[rng.next(Self.alphabet.count)], at: at)
            default:
                // Replace a digit run by a large or odd number.
                let numbers = ["-1", "1e400", "99999999999", "3.5", "0", "7", "1000001", "null", "\"x\""]
                bytes.replaceSubrange(at..<min(at + 1, bytes.count), with: Array(numbers[rng.next(numbers.count)].utf8))
            }
        }
        return bytes.filter { $0 != 0x0A }
    }

    func mutateValues(_ line: [UInt8], _ rng: inout Generator) -> [UInt8] {
        var bytes = line
        let digits = bytes.indices.filter { bytes[$0] >= UInt8(ascii: "0") && bytes[$0] <= UInt8(ascii: "9") }
        for _ in 0..<(1 + rng.next(3)) where !digits.isEmpty {
            bytes[digits[rng.next(digits.count)]] = UInt8(ascii: "0") + UInt8(rng.next(10))
        }
        var text = String(decoding: bytes, as: UTF8.self)
        if rng.next(3) == 0 {
            text = rng.next(2) == 0
                ? text.replacingOccurrences(of: "false", with: "true ") : text.replacingOccurrences(of: "true", with: "false")
        }
        return Array(text.utf8)
    }

    func testMutatedRequestsNeverBreakTheSession() throws {
        var rng = Generator(state: 77)
        var source = Session()
        send(&source, "{\"action\":\"reset\",\"seed\":31}")
        for k in 0..<12 where source.game?.outcome == .running {
            let mask = try XCTUnwrap(source.game?.actionMask())
            let allowed = mask.indices.filter { mask[$0] }
            send(&source, "{\"action\":\"step\",\"actionIndex\":\(allowed[k % allowed.count])}")
        }
        let stateText = try XCTUnwrap(source.handle(line: "{\"action\":\"getState\"}").dropFirst(9).dropLast())
        let seeds: [[UInt8]] = [
            Array("{\"action\":\"setState\",\"state\":\(stateText)}".utf8),
            Array("{\"action\":\"step\",\"actionIndex\":3}".utf8),
            Array("{\"action\":\"reset\",\"seed\":12}".utf8),
        ]
        var accepted = 0
        for _ in 0..<400 {
            var session = Session(seedSource: { 5 })
            send(&session, "{\"action\":\"setState\",\"state\":\(stateText)}")
            let before = session.game
            let line = mutate(seeds[rng.next(seeds.count)], &rng)
            var out = JSONWriter()
            line.withUnsafeBufferPointer { session.handle(line: $0, into: &out) }
            let response = try JSONParser.parse(out.string)
            guard case .object = response else { return XCTFail("not an object: \(out.string)") }
            if response["error"] != nil {
                XCTAssertEqual(session.game, before, "an error changed the game: \(String(decoding: line, as: UTF8.self))")
                continue
            }
            guard response["observation"] != nil else { continue }  // read-only answers
            accepted += 1
            // The accepted game reads back identically and can be played on.
            let text = session.handle(line: "{\"action\":\"getState\"}")
            var copy = Session()
            send(&copy, "{\"action\":\"setState\",\"state\":\(text.dropFirst(9).dropLast())}")
            XCTAssertEqual(copy.handle(line: "{\"action\":\"getState\"}"), text)
            for _ in 0..<20 {
                guard let mask = session.game?.actionMask(), mask.contains(true) else { break }
                let allowed = mask.indices.filter { mask[$0] }
                let r = send(&session, "{\"action\":\"step\",\"actionIndex\":\(allowed[rng.next(allowed.count)])}")
                XCTAssertNil(r["error"], "\(r)")
            }
        }
        XCTAssertGreaterThan(accepted, 30, "some mutated requests must be accepted, or the test proves little")
    }
}
