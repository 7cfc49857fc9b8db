// Fixed facts reported by hello/version, getActionSpace and getObservationSpace.

import HackMatrixCore

public enum ProtocolInfo {
    public static let protocolVersion = "2.1"
    public static let engineVersion = "0.1.0"
    public static let traceFormatVersion = 1
    public static let commands = [
        "reset", "step", "getValidActions", "getActionSpace", "getObservationSpace", "setState", "getState",
        "getInternalState", "hello", "version",
    ]
    public static let playerFeatures = 10
    public static let programFeatures = 23
    public static let cellFeatures = 42

    /// Names of the 28 actions, for error messages.
    static func actionName(_ action: Int) -> String {
        switch action {
        case 0: return "up"
        case 1: return "down"
        case 2: return "left"
        case 3: return "right"
        case 4: return "siphon"
        default: return Program.names[action - 5]
        }
    }

    static func writeHello(to out: inout JSONWriter) {
        out.beginObject()
        out.key("protocol"); out.string("hackmatrix-cli")
        out.key("protocolVersion"); out.string(protocolVersion)
        out.key("engine"); out.string("hackmatrix-swift")
        out.key("engineVersion"); out.string(engineVersion)
        out.key("actionCount"); out.int(Rules.actionCount)
        out.key("observationShapes")
        out.beginObject()
        out.key("player"); writeShape([playerFeatures], to: &out)
        out.key("programs"); writeShape([programFeatures], to: &out)
        out.key("grid"); writeShape([Rules.gridSize, Rules.gridSize, cellFeatures], to: &out)
        out.key("flat"); writeShape([ObservationEncoder.flatSize], to: &out)
        out.endObject()
        out.key("rewardComponents")
        out.beginArray()
        for name in RewardComponents.names {
            out.element()
            out.string(name)
        }
        out.endArray()
        out.key("traceFormat")
        out.beginObject()
        out.key("format"); out.string("hackmatrix-trace")
        out.key("version"); out.int(traceFormatVersion)
        out.endObject()
        out.key("commands")
        out.beginArray()
        for command in commands {
            out.element()
            out.string(command)
        }
        out.endArray()
        out.endObject()
    }

    static func writeShape(_ dims: [Int], to out: inout JSONWriter) {
        out.beginArray()
        for d in dims {
            out.element()
            out.int(d)
        }
        out.endArray()
    }

    static func writeObservationSpace(to out: inout JSONWriter) {
        out.beginObject()
        out.key("gridSize"); out.int(Rules.gridSize)
        out.key("playerFeatures"); out.int(playerFeatures)
        out.key("programFeatures"); out.int(programFeatures)
        out.key("cellFeatures"); out.int(cellFeatures)
        out.key("flatSize"); out.int(ObservationEncoder.flatSize)
        out.endObject()
    }
}
