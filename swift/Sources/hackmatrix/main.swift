// Placeholder entry point; the protocol helper replaces it.
print("hackmatrix: not built yet")
