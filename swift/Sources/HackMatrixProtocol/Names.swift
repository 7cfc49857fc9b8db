// Protocol spellings of the engine's enums (protocol.md §4.2, §6.4).
// Parsing is case-insensitive; writing is always lower case.

import HackMatrixCore

enum Names {
    static func enemyType(_ text: String) -> EnemyType? {
        switch text.lowercased() {
        case "virus": return .virus
        case "daemon": return .daemon
        case "glitch": return .glitch
        case "cryptog": return .cryptog
        default: return nil
        }
    }

    static func blockKind(_ text: String) -> BlockKind? {
        switch text.lowercased() {
        case "data": return .data
        case "program": return .program
        case "question": return .question
        default: return nil
        }
    }

    /// Quoted names, indexed by raw value, ready to append to a response.
    static let quotedEnemyTypes = EnemyType.allCases.map { JSONWriter.prepareString($0.name) }
    static let quotedPrograms = Program.names.map { JSONWriter.prepareString($0) }

    static func blockKindName(_ kind: BlockKind) -> StaticString {
        switch kind {
        case .data: return "data"
        case .program: return "program"
        case .question: return "question"
        }
    }

    /// Accepted alternative spellings of the program names with symbols.
    static let programAliases: [String: String] = [
        "siphplus": "siph+", "siph_plus": "siph+", "dbom": "d_bom", "d_bomb": "d_bom",
        "antiv": "anti-v", "anti_v": "anti-v", "atkplus": "atk+", "atk_plus": "atk+",
    ]

    /// Program index 0..22 of a program name or alias.
    static func program(_ text: String) -> Int? {
        let lower = text.lowercased()
        let canonical = programAliases[lower] ?? lower
        return Program.names.firstIndex(of: canonical)
    }
}
