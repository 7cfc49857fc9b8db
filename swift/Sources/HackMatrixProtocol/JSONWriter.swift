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
    public mutating func key(_ name: String) {
        separator()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts an array element (writes the comma if one is needed).
    public mutating func element() { separator() }

    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    public mutating func null() { raw("null") }

    public mutating func int(_ value: Int) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            for k in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[k]) }
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
                key(k)
                self.value(v)
            }
            endObject()
        }
    }

    mutating func writeString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for unit in value.utf8 {
            switch unit {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(unit >> 4)])
                bytes.append(hex[Int(unit & 0xF)])
            default: bytes.append(unit)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONWriter {
    /// Drops everything written after `count` bytes (used to replace a partly
    /// written response by an error).
    public mutating func truncate(to count: Int) {
        bytes.removeSubrange(count...)
    }
}
