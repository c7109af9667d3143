// Stand-in for the example's custom_types.h: a point, stored as one array
// of structures on the CPU.
struct point { float x, y; };
