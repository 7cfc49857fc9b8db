// Writes compact JSON straight into a growable byte buffer. Responses are
// built by hand (no intermediate dictionaries) because one is produced on
// every step; the buffer is managed directly because Array's per-append
// bookkeeping was the largest cost of writing an observation.
//
// Commas are inserted automatically: `key(_:)` and `element()` write a comma
// unless the previous byte opened a container.

public struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes written so far.
    public private(set) var count = 0

    public init(capacity: Int = 4096) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// A copy of the bytes written.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    public var string: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    public mutating func removeAll() { count = 0 }

    /// Drops everything written after `count` bytes (used to replace a partly
    /// written response by an error).
    public mutating func truncate(to newCount: Int) { count = min(count, max(newCount, 0)) }

    // MARK: - Raw output

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    @inline(never)
    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    private mutating func byte(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    @inline(__always)
    private mutating func append(_ source: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n)
        (base + count).update(from: source, count: n)
        count += n
    }

    public mutating func raw(_ text: StaticString) { append(text.utf8Start, text.utf8CodeUnitCount) }

    /// Appends bytes prepared in advance (for example a quoted name).
    public mutating func raw(_ prepared: [UInt8]) {
        prepared.withUnsafeBufferPointer { if let p = $0.baseAddress { append(p, $0.count) } }
    }

    // MARK: - Structure

    @inline(__always)
    mutating func separator() {
        if count > 0 {
            let last = base[count - 1]
            if last != UInt8(ascii: "{") && last != UInt8(ascii: "[") { byte(UInt8(ascii: ",")) }
        }
    }

    public mutating func beginObject() { byte(UInt8(ascii: "{")) }
    public mutating func endObject() { byte(UInt8(ascii: "}")) }
    public mutating func beginArray() { byte(UInt8(ascii: "[")) }
    public mutating func endArray() { byte(UInt8(ascii: "]")) }

    /// Starts an object member: `,"name":`. The name must not need escaping.
    public mutating func key(_ name: StaticString) {
        let n = name.utf8CodeUnitCount
        reserve(n + 4)
        separator()
        base[count] = UInt8(ascii: "\"")
        (base + count + 1).update(from: name.utf8Start, count: n)
        base[count + 1 + n] = UInt8(ascii: "\"")
        base[count + 2 + n] = UInt8(ascii: ":")
        count += n + 3
    }

    /// Starts an object member whose name is only known at run time.
    /// (A different label keeps literals on the cheaper StaticString overload.)
    public mutating func key(named name: String) {
        separator()
        writeString(name)
        byte(UInt8(ascii: ":"))
    }

    /// Starts an object member from a name prepared by `JSONWriter.prepareKey`.
    public mutating func key(prepared: [UInt8]) {
        separator()
        raw(prepared)
    }

    /// `"name":` as bytes, for names written on every response.
    public static func prepareKey(_ name: String) -> [UInt8] {
        var out = JSONWriter(capacity: name.utf8.count + 3)
        out.writeString(name)
        out.byte(UInt8(ascii: ":"))
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

    // MARK: - Values

    public mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    public mutating func null() { raw("null") }

    public mutating func int(_ value: Int) {
        if value >= 0 && value < 10 {
            byte(UInt8(ascii: "0") + UInt8(value))
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
            append(buffer.baseAddress! + start, 24 - start)
        }
    }

    /// A float64 in its shortest round-trip form. Zero (either sign) is `0`;
    /// a non-finite value, which JSON cannot express, is written as `null`.
    public mutating func double(_ value: Double) {
        if value == 0 {
            byte(UInt8(ascii: "0"))
        } else if !value.isFinite {
            null()
        } else {
            writeUTF8(value.description)
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

    private mutating func writeUTF8(_ text: String) {
        var copy = text
        copy.withUTF8 { utf8 in if let p = utf8.baseAddress { append(p, utf8.count) } }
    }

    mutating func writeString(_ value: String) {
        byte(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { utf8 in
            // Names and messages rarely need escaping: copy them in one piece.
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                if let p = utf8.baseAddress { append(p, utf8.count) }
                return
            }
            for unit in utf8 { appendEscaped(unit) }
        }
        byte(UInt8(ascii: "\""))
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
            byte(hex[Int(unit >> 4)])
            byte(hex[Int(unit & 0xF)])
        default: byte(unit)
        }
    }
}
