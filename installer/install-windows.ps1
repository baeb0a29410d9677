<#
.SYNOPSIS
  Install stratpd-xl for Excel on Windows: a virtual environment with the package, the add-in
  (stratpd_xl.xlam, "StratPD" ribbon tab), the add-in's config file and the cell formulas.

.DESCRIPTION
  Safe to run again: an existing venv is reused, the package and add-in are updated, and the
  config file keeps any settings that are not ours. Run it from the stratpd-xl folder:

    powershell -ExecutionPolicy Bypass -File installer\install-windows.ps1 [-DryRun]

  The last step puts =STRATPD and =STRATIMPACT into the installed add-in. Excel must allow it once:
  File > Options > Trust Center > Trust Center Settings > Macro Settings >
  "Trust access to the VBA project object model". If it does not, the step says so and the rest
  of the installation still stands; tick the box and run the script again.

.PARAMETER DryRun
  Print every step, change nothing (also what the config file would contain).
.PARAMETER Venv
  Where the virtual environment goes (default: %USERPROFILE%\.stratpd-xl\venv).
.PARAMETER Python
  Python 3.11+ used to create the venv (default: "py -3"; the Python launcher).
.PARAMETER FromPyPI
  Install "stratpd-xl" from PyPI instead of the folder this script sits in.
.PARAMETER SkipFormulas
  Do not import the cell formulas into the add-in (ribbon button only).
#>
[CmdletBinding()]
param(
    [switch]$DryRun,
    [string]$Venv = (Join-Path $env:USERPROFILE ".stratpd-xl\venv"),
    [string]$Python = "py -3",
    [switch]$FromPyPI,
    [switch]$SkipFormulas
)
$ErrorActionPreference = "Stop"

$Root = Split-Path -Parent $PSScriptRoot
$Addin = Join-Path $Root "addin\stratpd_xl.xlam"
$ConfigTool = Join-Path $Root "stratpd_xl\excel\config.py"
$VenvPy = Join-Path $Venv "Scripts\python.exe"
$Xlwings = Join-Path $Venv "Scripts\xlwings.exe"
$Package = if ($FromPyPI) { "stratpd-xl" } else { $Root }

function Step([string]$Text) { Write-Host "==> $Text" }

function Run([string]$Exe, [string[]]$Arguments) {
    # Print the command as it would be typed, then run it unless this is a dry run.
    Write-Host ("    > " + $Exe + " " + ($Arguments -join " "))
    if (-not $DryRun) {
        & $Exe @Arguments
        if ($LASTEXITCODE -ne 0) { throw "failed ($LASTEXITCODE): $Exe $($Arguments -join ' ')" }
    }
}

if (-not (Test-Path $Addin)) { throw "missing $Addin : run this script from the stratpd-xl folder" }
if (-not (Test-Path $ConfigTool)) { throw "missing $ConfigTool" }
if ($DryRun) { Write-Host "Dry run: nothing is changed." }

Step "1/5 Python environment $Venv"
$PythonParts = $Python -split " "
if (Test-Path $VenvPy) {
    Write-Host "    exists, reused"
} else {
    $VersionCheck = "import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)"
    try {
        & $PythonParts[0] (@($PythonParts | Select-Object -Skip 1) + @("-c", $VersionCheck))
    } catch {
        throw "'$Python' was not found: install Python 3.11 or newer from python.org or pass -Python"
    }
    if ($LASTEXITCODE -ne 0) {
        throw "'$Python' is not Python 3.11 or newer: install it from python.org or pass -Python"
    }
    Run $PythonParts[0] (@($PythonParts | Select-Object -Skip 1) + @("-m", "venv", $Venv))
}

Step "2/5 Install the package ($Package)"
Run $VenvPy @("-m", "pip", "install", "--quiet", "--upgrade", "pip")
Run $VenvPy @("-m", "pip", "install", "--quiet", "--upgrade", $Package)

Step "3/5 Install the add-in into Excel's XLSTART folder (close Excel first)"
Run $Xlwings @("addin", "install", "-f", $Addin)
if (-not $DryRun) {
    # "xlwings addin install" reports failures but exits 0; ask where the add-in is instead.
    $StatusOut = (& $Xlwings addin status -f $Addin) -join "`n"
    if ($StatusOut -notmatch "is installed") {
        throw "the add-in was not installed: $StatusOut Close Excel and run this script again."
    }
    Write-Host ("    " + ($StatusOut -split "`n")[0])
}

Step "4/5 Add-in config: interpreter and formula module"
$ConfigArgs = @($ConfigTool, "write", "--platform", "win32", "--interpreter", $VenvPy)
if ($DryRun) { $ConfigArgs += "--dry-run" }
$ConfigPy = if ((Test-Path $VenvPy) -or -not $DryRun) { @($VenvPy) } else { $PythonParts }
# Runs even in a dry run: with --dry-run it only prints the file it would write.
& $ConfigPy[0] (@($ConfigPy | Select-Object -Skip 1) + $ConfigArgs) | ForEach-Object { "    $_" }
if ($LASTEXITCODE -ne 0) { throw "writing the add-in config failed" }

Step "5/5 Cell formulas =STRATPD and =STRATIMPACT in the add-in"
if ($SkipFormulas) {
    Write-Host "    skipped (-SkipFormulas): the ribbon button works, the formulas do not"
} elseif ($DryRun) {
    Write-Host "    > $VenvPy -m stratpd_xl.excel.config import-udfs"
} else {
    & $VenvPy -m stratpd_xl.excel.config import-udfs
    if ($LASTEXITCODE -ne 0) {
        Write-Warning ("Could not import the formulas. In Excel tick File > Options > Trust Center > " +
            "Trust Center Settings > Macro Settings > 'Trust access to the VBA project object model', " +
            "close Excel and run this script again.")
    }
}

if ($DryRun) { Write-Host "Dry run done: nothing was changed."; exit 0 }
Write-Host "Done. Start Excel: the ribbon has a StratPD tab; =STRATPD(...) works in any workbook."
