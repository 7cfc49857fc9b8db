// Typed, range-checked access to the members of one JSON object of the state
// schema, with protocol.md §3.2 value rules and §6 error paths.

/// Integer fields whose rule gives no upper bound stop here (protocol.md §6.1).
let unboundedCap = 1_000_000

struct FieldReader {
    let object: JSONObject
    let path: String

    /// Checks that `value` is an object without keys outside `allowed`.
    init(_ value: JSONValue, path: String, allowed: Set<String>) throws(StateError) {
        guard case .object(let object) = value else {
            throw StateError(path: path, reason: "wrong type", message: "\(path) must be an object, not \(value.typeName)")
        }
        for key in object.keys where !allowed.contains(key) {
            let keyPath = "\(path).\(key)"
            throw StateError(path: keyPath, reason: "unknown key", message: "\(keyPath) is not a known key")
        }
        self.object = object
        self.path = path
    }

    func child(_ key: String) -> String { "\(path).\(key)" }

    func missing(_ key: String) -> StateError {
        StateError(path: child(key), reason: "missing", message: "\(child(key)) is required")
    }

    /// An integer in `range`, or nil when absent or null.
    func optionalInt(_ key: String, _ range: ClosedRange<Int>) throws(StateError) -> Int? {
        guard let value = object.present(key) else { return nil }
        return try FieldReader.integer(value, path: child(key), range)
    }

    func int(_ key: String, _ range: ClosedRange<Int>, default fallback: Int? = nil) throws(StateError) -> Int {
        if let value = try optionalInt(key, range) { return value }
        guard let fallback else { throw missing(key) }
        return fallback
    }

    func optionalBool(_ key: String) throws(StateError) -> Bool? {
        guard let value = object.present(key) else { return nil }
        guard case .bool(let b) = value else {
            throw StateError(path: child(key), reason: "wrong type", message: "\(child(key)) must be true or false, not \(value.typeName)")
        }
        return b
    }

    func bool(_ key: String, default fallback: Bool = false) throws(StateError) -> Bool {
        try optionalBool(key) ?? fallback
    }

    func optionalString(_ key: String) throws(StateError) -> String? {
        guard let value = object.present(key) else { return nil }
        guard case .string(let s) = value else {
            throw StateError(path: child(key), reason: "wrong type", message: "\(child(key)) must be a string, not \(value.typeName)")
        }
        return s
    }

    /// An enum string mapped through `lookup`; `names` lists the accepted values for the message.
    func optionalName<T>(_ key: String, names: String, _ lookup: (String) -> T?) throws(StateError) -> T? {
        guard let text = try optionalString(key) else { return nil }
        guard let parsed = lookup(text) else {
            throw StateError(path: child(key), reason: "unknown name", message: "\(child(key)) must be one of \(names), not \"\(text)\"")
        }
        return parsed
    }

    func name<T>(_ key: String, names: String, _ lookup: (String) -> T?) throws(StateError) -> T {
        guard let parsed = try optionalName(key, names: names, lookup) else { throw missing(key) }
        return parsed
    }

    /// An array (absent or null: empty).
    func array(_ key: String) throws(StateError) -> [JSONValue] {
        guard let value = object.present(key) else { return [] }
        guard case .array(let elements) = value else {
            throw StateError(path: child(key), reason: "wrong type", message: "\(child(key)) must be an array, not \(value.typeName)")
        }
        return elements
    }

    static func integer(_ value: JSONValue, path: String, _ range: ClosedRange<Int>) throws(StateError) -> Int {
        guard case .number(let d) = value, d.isFinite, d.rounded(.towardZero) == d else {
            throw StateError(path: path, reason: "wrong type", message: "\(path) must be an integer")
        }
        guard d >= Double(range.lowerBound), d <= Double(range.upperBound) else {
            throw StateError(path: path, reason: "out of range", message: "\(path) must be in \(range.lowerBound)..\(range.upperBound)")
        }
        return Int(d)
    }
}
