"""A run over many files: discover, scan the bytes, consult the cache, analyse the candidates
in worker processes, write fixes (`runner`); the per-file step (`fileproc`), the byte scan
(`scan`), the process pools (`workers`, `forked`), the result cache (`cache`) and the sweep
split over machines (`shards`)."""
