from localagent.cli import main

main()
