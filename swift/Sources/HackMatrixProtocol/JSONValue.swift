// A parsed JSON value. Objects keep their keys in input order; a repeated key
// resolves to its last occurrence (as Python's json module does).

public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

public struct JSONObject: Sendable, Equatable {
    public var keys: [String]
    public var values: [JSONValue]

    public init(keys: [String] = [], values: [JSONValue] = []) {
        self.keys = keys
        self.values = values
    }

    /// The value of `key` (last occurrence wins), or nil when absent.
    public subscript(_ key: String) -> JSONValue? {
        var i = keys.count - 1
        while i >= 0 {
            if keys[i] == key { return values[i] }
            i -= 1
        }
        return nil
    }

    /// The value of `key`, treating an explicit `null` as absent (protocol.md §3.2).
    public func present(_ key: String) -> JSONValue? {
        guard let value = self[key], value != .null else { return nil }
        return value
    }
}

extension JSONValue {
    /// The integer this number denotes, if it is a JSON number with an
    /// integral value (`3`, `3.0`, `3e0`) that fits in an `Int`.
    public var integerValue: Int? {
        guard case .number(let d) = self, d.rounded(.towardZero) == d, abs(d) < 9.0e18 else { return nil }
        return Int(d)
    }

    /// True for any number with an integral value, however large.
    public var isIntegral: Bool {
        guard case .number(let d) = self else { return false }
        return d.isFinite && d.rounded(.towardZero) == d
    }

    /// A short name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
