return { direction = "undo", key = "dot:load_pair" }
