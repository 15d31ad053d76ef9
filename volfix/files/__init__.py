"""Files on disk: which files a run checks (`discovery`), reading and writing them without
corrupting a byte (`sourcefile`), and the bytes-level prefilter that decides, before any
parse, which of them could hold a finding (`prefilter`)."""
