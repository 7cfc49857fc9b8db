public enum ProtocolPlaceholder {}
