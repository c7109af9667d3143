return { direction = "apply", key = "scale3d:t", why = "the digits are peeled in the layout's reverse order (c first), and the store becomes out[t]" }
