// Stand-in for elpa's configure-generated config-f90.h: the build
// switches it would define are left unset.
