// Stands in for an empty room in a host-only build.
