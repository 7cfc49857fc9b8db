// Writes compact JSON straight into a byte buffer. Responses are built by
// hand (no intermediate dictionaries) because they are produced on every step.
//
// Commas are inserted automatically: `key(_:)` and `element()` write a comma
// unless the previous byte opened a container.

public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 4096) { bytes.reserveCapacity(capacity) }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    @inline(__always)
    mutating func separator() {
        if let last = bytes.last, last != UInt8(ascii: "{"), last != UInt8(ascii: "[") {
            bytes.append(UInt8(ascii: ","))
        }
    }

    public mutating func beginObject() { bytes.append(UInt8(ascii: "{")) }
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")) }
    public mutating func beginArray() { bytes.append(UInt8(ascii: "[")) }
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")) }

    /// Starts an object member: `,"name":`. The name must not need escaping.
    public mutating func key(_ name: StaticString) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts an object member whose name is only known at run time.
    /// (A different label keeps literals on the cheaper StaticString overload.)
    public mutating func key(named name: String) {
        separator()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts an object member from a name prepared by `JSONWriter.prepareKey`.
    public mutating func key(prepared: [UInt8]) {
        separator()
        bytes.append(contentsOf: prepared)
    }

    /// `"name":` as bytes, for names written on every response.
    public static func prepareKey(_ name: String) -> [UInt8] {
        var out = JSONWriter(capacity: name.utf8.count + 3)
        out.writeString(name)
        out.bytes.append(UInt8(ascii: ":"))
        return out.bytes
    }

    /// `"text"` as bytes, for string values written on every response.
    public static func prepareString(_ text: String) -> [UInt8] {
        var out = JSONWriter(capacity: text.utf8.count + 2)
        out.writeString(text)
        return out.bytes
    }

    /// Starts an array element (writes the comma if one is needed).
    public mutating func element() { separator() }

    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    public mutating func null() { raw("null") }

    public mutating func int(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // Digits are produced backwards into a small stack buffer, then copied once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            var magnitude = value.magnitude
            var start = 24
            while magnitude > 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<24]))
        }
    }

    /// A float64 in its shortest round-trip form. Zero (either sign) is `0`;
    /// a non-finite value, which JSON cannot express, is written as `null`.
    public mutating func double(_ value: Double) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
        } else if !value.isFinite {
            null()
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    public mutating func string(_ value: String) {
        writeString(value)
    }

    /// Any parsed JSON value, for echoing request values in error details.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let d):
            // Echo integral request values the way they were most likely written.
            if d.rounded(.towardZero) == d && abs(d) < 1e15 { int(Int(d)) } else { double(d) }
        case .string(let s): writeString(s)
        case .array(let elements):
            beginArray()
            for e in elements {
                element()
                self.value(e)
            }
            endArray()
        case .object(let object):
            beginObject()
            for (k, v) in zip(object.keys, object.values) {
                key(named: k)
                self.value(v)
            }
            endObject()
        }
    }

    mutating func writeString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { utf8 in
            // Names and messages rarely need escaping: copy them in one piece.
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
                return
            }
            for unit in utf8 { appendEscaped(unit) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ unit: UInt8) {
        switch unit {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        case 0..<0x20:
            raw("\\u00")
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(hex[Int(unit >> 4)])
            bytes.append(hex[Int(unit & 0xF)])
        default: bytes.append(unit)
        }
    }

    /// Appends bytes prepared in advance (for example a quoted name).
    public mutating func raw(_ prepared: [UInt8]) { bytes.append(contentsOf: prepared) }
}

extension JSONWriter {
    /// Drops everything written after `count` bytes (used to replace a partly
    /// written response by an error).
    public mutating func truncate(to count: Int) {
        bytes.removeSubrange(count...)
    }
}
