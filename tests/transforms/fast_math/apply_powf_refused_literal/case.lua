return { direction = "apply", key = "wave:__powf" }
