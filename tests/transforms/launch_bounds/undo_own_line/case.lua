return { direction = "undo", key = "relax",
         why = "the lineage layout: the bound after the return type, the name on the next line; undo leaves `void` there and apply puts it back" }
