// The engine's public compute types (`ActivationPrecision`, `Matrix`, `Kernels`,
// `MemoryBandwidth`, which formats are supported) are the CPU backend's: whoever imports the
// engine sees them as part of it, without naming the backend.
@_exported import CPUBackend
