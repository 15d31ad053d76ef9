"""A stand-in for requests, for programs that only download when a data file is missing: no
network here, so any request raises."""


class Session:
    def get(self, *args, **kwargs):
        raise RuntimeError("no network in this run")


def get(*args, **kwargs):
    raise RuntimeError("no network in this run")
