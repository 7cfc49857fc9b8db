// Error responses (protocol.md §7): {"error": {"code", "message", "details"?}}.

public enum ErrorCode: String, Sendable {
    case parseError = "parse_error"
    case invalidRequest = "invalid_request"
    case unknownCommand = "unknown_command"
    case noGame = "no_game"
    case episodeOver = "episode_over"
    case actionOutOfRange = "action_out_of_range"
    case actionMasked = "action_masked"
    case invalidState = "invalid_state"
    case internalError = "internal_error"
}

public struct ProtocolError: Error, Sendable {
    public var code: ErrorCode
    public var message: String
    /// Extra facts, written as the `details` object when not empty.
    public var details: [(key: String, value: JSONValue)]

    public init(_ code: ErrorCode, _ message: String, details: [(key: String, value: JSONValue)] = []) {
        self.code = code
        self.message = message
        self.details = details
    }

    func write(to out: inout JSONWriter) {
        out.beginObject()
        out.key("error")
        out.beginObject()
        out.key("code")
        out.string(code.rawValue)
        out.key("message")
        out.string(message)
        if !details.isEmpty {
            out.key("details")
            out.beginObject()
            for (key, value) in details {
                out.key(named: key)
                out.value(value)
            }
            out.endObject()
        }
        out.endObject()
        out.endObject()
    }
}

/// A rejected `setState` (protocol.md §7): where (`state.enemies[1].hp`) and why.
public struct StateError: Error, Equatable, Sendable {
    public var path: String
    public var reason: String
    public var message: String

    public init(path: String, reason: String, message: String) {
        self.path = path
        self.reason = reason
        self.message = message
    }

    var protocolError: ProtocolError {
        ProtocolError(.invalidState, message, details: [("path", .string(path)), ("reason", .string(reason))])
    }
}
