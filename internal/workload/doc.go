// Package workload defines what each fio job does during a benchmark step:
// block size, read/write mix, access pattern, queue depth, I/O engine, direct
// I/O, working-set size and data compressibility.
//
// A Spec is either taken from a named Profile (the workloads of the published
// NetApp cloud storage characterisations summarised in docs/METHODOLOGY.md §2)
// or built from the base spec, and then adjusted with Overrides. Resolve does
// both and validates the result; nothing else reaches fio, so users never pass
// raw fio option strings.
//
// # Model
//
//   - Every spec field is an integer with its unit in the name, a small enum or
//     a bool: no floats, no free-form strings.
//   - The base spec (used when no profile is named) is 4 KiB random reads,
//     iodepth 16, libaio, direct I/O, a 1 GiB working set per client and
//     incompressible data.
//   - Every profile uses iodepth 16 (random and sequential alike), libaio,
//     direct I/O, a 1 GiB working set per client and incompressible data;
//     only block size, read percentage and pattern differ between profiles.
//     Iodepth 16 is the low end of the outstanding-I/O range of the Iometer
//     studies (16 → 64), deep enough to keep a networked volume busy without
//     hiding latency in the client queue. Real runs usually override the
//     working set so that it is well beyond any cache (METHODOLOGY §1.3).
//   - "Four corners" and the "read/write mix sweep" are not profiles of their
//     own: they are ordered lists of profiles (FourCorners, MixSweep) that a
//     caller expands into one benchmark per profile.
//
// # Validation
//
// Validate returns the first violated rule in field order as a *FieldError
// whose Field is the JSON-style path of the offending field
// ("workload.blockSizeBytes"); ValidateAll returns every violation. Two rules
// exist because fio would otherwise silently do something other than what the
// spec says:
//
//   - the synchronous engines (psync, sync) issue one I/O at a time per job and
//     ignore a deeper iodepth, so they require ioDepth 1;
//   - libaio without O_DIRECT completes submissions synchronously on Linux, so
//     buffered libaio would silently run at queue depth 1: libaio requires
//     direct I/O.
//
// Data is incompressible by default (CompressPercent 0) because ONTAP may
// compress and deduplicate inline, which would flatter the results.
package workload
