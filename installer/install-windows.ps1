<#
.SYNOPSIS
  Install stratpd-xl for Excel on Windows: finds Python 3.11+ and runs
  "python -m stratpd_xl.excel.install", where every step lives (and is tested).

.DESCRIPTION
  Run it from the stratpd-xl folder; any options go to the Python installer unchanged:

    powershell -ExecutionPolicy Bypass -File installer\install-windows.ps1 [--dry-run] [--uninstall]
        [--venv DIR] [--package WHEEL-OR-URL] [--from-pypi] [--use-current] [--import-formulas]

  Python is taken from $env:STRATPD_XL_PYTHON if set, else the activated conda environment's
  ($env:CONDA_PREFIX, which the installer then uses as its environment), else the Python
  launcher "py -3", else "python" on PATH.  "python -m stratpd_xl.excel.install --help" lists
  the options.
#>
$ErrorActionPreference = "Stop"
$Root = Split-Path -Parent $PSScriptRoot

# One string for the program and a separate array for its leading arguments: never index into
# a one-element array (PowerShell unrolls it to a string and [0] would be its first letter).
[string]$Exe = ""
[string[]]$Pre = @()
if ($env:STRATPD_XL_PYTHON) {
    $Exe = $env:STRATPD_XL_PYTHON
} elseif ($env:CONDA_PREFIX -and (Test-Path (Join-Path $env:CONDA_PREFIX "python.exe"))) {
    $Exe = Join-Path $env:CONDA_PREFIX "python.exe"
} elseif (Get-Command py -ErrorAction SilentlyContinue) {
    $Exe = "py"
    $Pre = @("-3")
} elseif (Get-Command python -ErrorAction SilentlyContinue) {
    $Exe = "python"
} else {
    Write-Error "Python was not found: install Python 3.11 or newer from python.org."
    exit 1
}

& $Exe @Pre -c "import sys; sys.exit(sys.version_info < (3, 11))"
if ($LASTEXITCODE -ne 0) {
    Write-Error "$Exe is not Python 3.11 or newer: install it from python.org or set STRATPD_XL_PYTHON."
    exit 1
}

# The installer uses only the standard library, so it runs from this folder before installing.
$env:PYTHONPATH = $Root
& $Exe @Pre -m stratpd_xl.excel.install @args
exit $LASTEXITCODE
