// The hand-written JSON parser and writer.
import XCTest
@testable import HackMatrixProtocol
import HackMatrixTestSupport

final class JSONParserTests: XCTestCase {
    func parse(_ text: String) -> JSONValue? { try? JSONParser.parse(text) }

    func testScalarsAndContainers() throws {
        XCTAssertEqual(parse("null"), .null)
        XCTAssertEqual(parse(" true "), .bool(true))
        XCTAssertEqual(parse("false"), .bool(false))
        XCTAssertEqual(parse("\"a\\n\\u00e9\\ud83d\\ude00\""), .string("a\né😀"))
        XCTAssertEqual(parse("[1, [], {}]"), .array([.number(1), .array([]), .object(JSONObject())]))
        let object = try XCTUnwrap(parse("{\"a\": 1, \"b\": \"x\", \"a\": 2}"))
        XCTAssertEqual(object["a"], .number(2), "the last occurrence of a key wins")
    }

    func testIntegralNumbers() {
        for text in ["3", "3.0", "3e0", "0.3e1", "300e-2"] {
            XCTAssertEqual(parse(text)?.integerValue, 3, text)
        }
        XCTAssertNil(parse("3.5")?.integerValue)
        XCTAssertEqual(parse("-0")?.integerValue, 0)
        XCTAssertEqual(parse("4294967295")?.integerValue, 4_294_967_295)
        XCTAssertEqual(parse("1e400"), .number(.infinity))
        XCTAssertNil(parse("1e400")?.integerValue)
        XCTAssertEqual(parse("123456789012345678901234567890")?.double, 123456789012345678901234567890.0)
        XCTAssertEqual(parse("0.1")?.double, 0.1)
    }

    func testRejectsInvalidJSON() {
        let bad = [
            "", "   ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "01", "1.", ".5", "+1", "-", "1e", "tru", "nul",
            "\"abc", "\"\\x\"", "\"\\u12g4\"", "\"\\ud800\"", "\"\\ud800\\u0041\"", "\"a\u{01}b\"", "[1] 2",
            "{\"a\" 1}", "NaN", "Infinity", "'a'",
        ]
        for text in bad { XCTAssertNil(parse(text), "accepted \(text.debugDescription)") }
    }

    func testRejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        XCTAssertThrowsError(try bytes.withUnsafeBufferPointer { try JSONParser.parse($0) })
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        XCTAssertThrowsError(try overlong.withUnsafeBufferPointer { try JSONParser.parse($0) })
    }

    func testNestingLimit() {
        let ok = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        XCTAssertNotNil(parse(ok))
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertNil(parse(deep))
        let deepObjects = String(repeating: "{\"a\":", count: JSONParser.maxDepth + 1) + "1"
            + String(repeating: "}", count: JSONParser.maxDepth + 1)
        XCTAssertNil(parse(deepObjects))
    }
}

final class JSONWriterTests: XCTestCase {
    func written(_ body: (inout JSONWriter) -> Void) -> String {
        var out = JSONWriter()
        body(&out)
        return out.string
    }

    func testDoublesRoundTripAndZeroIsPlain() throws {
        XCTAssertEqual(written { $0.double(0.0) }, "0")
        XCTAssertEqual(written { $0.double(-0.0) }, "0")
        XCTAssertEqual(written { $0.double(.infinity) }, "null")
        for value in [-0.01, 0.04, 1.0 / 3.0, 100.0, 1e-7, Double.leastNonzeroMagnitude, 1.7976931348623157e308, -12.5, 0.1 + 0.2] {
            let text = written { $0.double(value) }
            XCTAssertEqual(try JSONParser.parse(text), .number(value), text)
            XCTAssertEqual(Double(text), value, text)
        }
    }

    func testIntegers() {
        XCTAssertEqual(written { $0.int(0) }, "0")
        XCTAssertEqual(written { $0.int(-42) }, "-42")
        XCTAssertEqual(written { $0.int(4_294_967_295) }, "4294967295")
        XCTAssertEqual(written { $0.int(Int.min) }, String(Int.min))
    }

    func testStringsAreEscaped() throws {
        let text = "q\"b\\n\nt\t\u{01}é"
        let json = written { $0.string(text) }
        XCTAssertEqual(json, "\"q\\\"b\\\\n\\nt\\t\\u0001é\"")
        XCTAssertEqual(try JSONParser.parse(json), .string(text))
    }

    func testCommasAreInsertedOnlyBetweenMembers() {
        let json = written { out in
            out.beginObject()
            out.key("a"); out.beginArray(); out.endArray()
            out.key("b"); out.beginArray(); out.element(); out.int(1); out.element(); out.beginObject(); out.endObject(); out.endArray()
            out.key("c"); out.null()
            out.endObject()
        }
        XCTAssertEqual(json, "{\"a\":[],\"b\":[1,{}],\"c\":null}")
    }
}
