return { direction = "undo", key = "relax",
         why = "the lineage layout (the bound ends the line, the name starts the next): undo joins the name back after void, apply breaks the line again" }
