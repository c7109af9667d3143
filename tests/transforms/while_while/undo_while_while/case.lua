return { direction = "undo", key = "raytrace:e",
  why = "raytrace v2_while_while -> v1_bvh_if_if: the traversal and its comments come back as v1 has them, DONE's #define goes" }
