-- The emu backend of `klineage worker` lives in klineage.emu_worker.
return require "klineage.emu_worker"
