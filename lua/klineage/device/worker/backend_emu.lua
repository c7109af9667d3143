-- The emu backend of `klineage worker` lives in klineage.device.emu_worker.
return require "klineage.device.emu_worker"
